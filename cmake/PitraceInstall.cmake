# PitraceInstall.cmake: what `cmake --install build --prefix P` lays out.
#
#   P/bin                      pitrace, pitrace_embed (and vadd, pipeline with
#                              -DPITRACE_INSTALL_EXAMPLES=ON)
#   P/lib                      libpirt.so (with its version links), the plugins
#                              libpi_opencl.so, libpi_level_zero.so, libpi_cuda.so,
#                              the recording shim libpi_shim.so, the replay plugin
#                              libpi_replay.so (those that are built), the
#                              OpenCL front end libpitrace_opencl.so
#   P/include                  pirt.h, pirt_pi.h, pi/pi.h, pi/pi_gen.h, pi/pi_desc.h
#   P/etc/OpenCL/vendors/pitrace.icd  the OpenCL front end's vendor file,
#                              naming P/lib/libpitrace_opencl.so by its absolute
#                              path (pitrace run and record find it as
#                              <bindir>/../etc/OpenCL/vendors/pitrace.icd)
#   P/etc/pitrace/plugins.conf the runtime's default plugins config
#   P/lib/pkgconfig/pitrace.pc
#   P/lib/cmake/pitrace/       pitraceConfig.cmake (+ version): the targets
#                              pitrace::pirt, pitrace::pitrace_embed,
#                              pitrace::pitrace and pitrace_add_device_code()
#
# The runtime finds its plugins in its own directory and reads
# <libdir>/../etc/pitrace/plugins.conf (runtime/src/plugins.c); executables
# find libpirt.so through their RUNPATH ($ORIGIN/../lib, set at the top), so
# nothing needs LD_LIBRARY_PATH. Everything is relocatable: the prefix may
# change at install time (--prefix, DESTDIR) and the tree may move
# afterwards, except pitrace.icd: an .icd file names its library by path
# (the ICD loader dlopens the name as given), so it is written at install
# time with the final path; a moved tree needs installing again, and pitrace
# run and record say so rather than route applications to nothing.
#
# Both etc/ files lie beside the prefix, not in CMAKE_INSTALL_SYSCONFDIR
# (/etc for the prefix /usr): the runtime and pitrace find them relative to
# themselves, and a pitrace.icd in the system's /etc/OpenCL/vendors would put
# the front end into every OpenCL application's platform list.
include(CMakePackageConfigHelpers)

option(PITRACE_INSTALL_EXAMPLES "Install the examples vadd and pipeline into bin" OFF)

set(PITRACE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pitrace)
# The runtime reads <its directory>/../etc/pitrace/plugins.conf.
cmake_path(GET CMAKE_INSTALL_LIBDIR PARENT_PATH _pitrace_lib_parent)
if(_pitrace_lib_parent)
  set(PITRACE_CONFIG_DIR ${_pitrace_lib_parent}/etc/pitrace)
else()
  set(PITRACE_CONFIG_DIR etc/pitrace)
endif()
# pitrace run and record read <bindir>/../etc/OpenCL/vendors/pitrace.icd.
cmake_path(GET CMAKE_INSTALL_BINDIR PARENT_PATH _pitrace_bin_parent)
if(_pitrace_bin_parent)
  set(PITRACE_ICD_DIR ${_pitrace_bin_parent}/etc/OpenCL/vendors)
else()
  set(PITRACE_ICD_DIR etc/OpenCL/vendors)
endif()
set(_pitrace_gen ${PROJECT_BINARY_DIR}/cmake/pitrace-install)

# ---- Libraries and programs ---------------------------------------------------
install(TARGETS pirt pi_headers EXPORT pitraceTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS pitrace_embed pitrace EXPORT pitraceTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Plugins, the shim, the replay plugin and the SQLite extension are loaded with
# dlopen: no export.
foreach(module pi_opencl pi_level_zero pi_cuda pi_shim pi_sigfwd pi_replay pitrace_opencl pitrace_sqlite)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endforeach()
if(PITRACE_INSTALL_EXAMPLES)
  install(TARGETS vadd pipeline RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# ---- Headers ------------------------------------------------------------------
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/pirt.h
  ${PROJECT_SOURCE_DIR}/runtime/include/pirt_pi.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/runtime/include/pi/pi.h
  ${PROJECT_SOURCE_DIR}/runtime/include/pi/pi_gen.h
  ${PROJECT_SOURCE_DIR}/runtime/include/pi/pi_desc.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pi)

# ---- The default plugins config -------------------------------------------------
# Generated outside build/etc: the build tree keeps using the built-in list.
file(WRITE ${_pitrace_gen}/plugins.conf
"# The pitrace runtime's default plugins, read from <libdir>/../etc/pitrace/
# when SYCL_PI_CONFIG is unset. One plugin a line: library [backend]. A bare
# name is searched in LD_LIBRARY_PATH, then beside libpirt.so, then in the
# system's paths; a plugin that is missing is skipped (SYCL_PI_TRACE=1 says so).
libpi_opencl.so      opencl
libpi_level_zero.so  level_zero
libpi_cuda.so        cuda
")
install(FILES ${_pitrace_gen}/plugins.conf DESTINATION ${PITRACE_CONFIG_DIR})

# ---- The OpenCL front end's vendor file -------------------------------------------
# An .icd file names its library by path, so it is written at install time,
# when the final location is known: the library's path without DESTDIR (where
# it will lie), the file itself under DESTDIR (where it is staged).
if(TARGET pitrace_opencl)
  install(CODE "
    set(_icd_dir [[${PITRACE_ICD_DIR}]])
    set(_icd_libdir [[${CMAKE_INSTALL_LIBDIR}]])
    get_filename_component(_icd_prefix \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
    foreach(_v _icd_dir _icd_libdir)
      if(NOT IS_ABSOLUTE \"\${\${_v}}\")
        set(\${_v} \"\${_icd_prefix}/\${\${_v}}\")
      endif()
    endforeach()
    set(_icd_file \"\$ENV{DESTDIR}\${_icd_dir}/pitrace.icd\")
    message(STATUS \"Installing: \${_icd_file}\")
    file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${_icd_dir}\")
    file(WRITE \"\${_icd_file}\" \"\${_icd_libdir}/$<TARGET_FILE_NAME:pitrace_opencl>\\n\")
    file(CHMOD \"\${_icd_file}\" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_icd_file}\")")
endif()

# ---- pkg-config -----------------------------------------------------------------
# Relocatable: the prefix comes from where the .pc file lies.
file(RELATIVE_PATH _pitrace_pc_to_prefix
  /_prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /_prefix)
string(REGEX REPLACE "/$" "" _pitrace_pc_to_prefix "${_pitrace_pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/pitrace.pc.in ${_pitrace_gen}/pitrace.pc @ONLY)
install(FILES ${_pitrace_gen}/pitrace.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- CMake package ------------------------------------------------------------
install(EXPORT pitraceTargets NAMESPACE pitrace:: DESTINATION ${PITRACE_CMAKE_DIR})

# pitrace_add_device_code() for consumers: cmake/PitraceDeviceCode.cmake with
# the project's own targets replaced by the imported ones. Each replacement
# must apply, so that an edit there cannot leave consumers a broken copy.
file(READ ${PROJECT_SOURCE_DIR}/cmake/PitraceDeviceCode.cmake _pitrace_fn)
foreach(pair
    "COMMAND pitrace_embed |COMMAND pitrace::pitrace_embed "
    "DEPENDS pitrace_embed |DEPENDS pitrace::pitrace_embed "
    "\${PROJECT_SOURCE_DIR}/runtime/include|$<TARGET_PROPERTY:pitrace::pirt,INTERFACE_INCLUDE_DIRECTORIES>"
    "PRIVATE pirt)|PRIVATE pitrace::pirt)")
  string(FIND "${pair}" "|" _bar)
  string(SUBSTRING "${pair}" 0 ${_bar} _from)
  math(EXPR _bar "${_bar} + 1")
  string(SUBSTRING "${pair}" ${_bar} -1 _to)
  string(FIND "${_pitrace_fn}" "${_from}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "cmake/PitraceInstall.cmake: cmake/PitraceDeviceCode.cmake no "
      "longer contains '${_from}'; update the installed copy's replacements")
  endif()
  string(REPLACE "${_from}" "${_to}" _pitrace_fn "${_pitrace_fn}")
endforeach()
file(WRITE ${_pitrace_gen}/pitraceDeviceCode.cmake
  "# Installed from cmake/PitraceDeviceCode.cmake for the pitrace package.\n"
  "${_pitrace_fn}")

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pitraceConfig.cmake.in
  ${_pitrace_gen}/pitraceConfig.cmake
  INSTALL_DESTINATION ${PITRACE_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR PITRACE_CONFIG_DIR)
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_pitrace_compat SameMinorVersion) # 0.x: minor versions may break
else()
  set(_pitrace_compat SameMajorVersion)
endif()
write_basic_package_version_file(${_pitrace_gen}/pitraceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_pitrace_compat})
install(FILES
  ${_pitrace_gen}/pitraceConfig.cmake
  ${_pitrace_gen}/pitraceConfigVersion.cmake
  ${_pitrace_gen}/pitraceDeviceCode.cmake
  DESTINATION ${PITRACE_CMAKE_DIR})
