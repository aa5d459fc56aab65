# pitrace_add_device_code(<target> SOURCES <file.cl|file.ptx|file.spv>...
#                         [NAME <name>] [EXPORTS <sym>...] [IMPORTS <sym>...]
#                         [COMPILE_OPTIONS <string>] [LINK_OPTIONS <string>]
#                         [NO_RUNTIME_LINK])
#
# Embeds the device-code files into <target> as device images, with their
# kernels, exported and imported symbols and specialization constants
# derived from the code (see tools/pitrace_embed.c), and registers them with
# the pitrace runtime when the target is loaded. EXPORTS and IMPORTS add
# symbols the code does not show (SPIR-V is opaque). NO_RUNTIME_LINK leaves
# the target without a dependency on libpirt (the symbols then resolve from
# the process), which only the tests of shutdown ordering want.
function(pitrace_add_device_code target)
  cmake_parse_arguments(A "NO_RUNTIME_LINK" "NAME;COMPILE_OPTIONS;LINK_OPTIONS"
                        "SOURCES;EXPORTS;IMPORTS" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "pitrace_add_device_code(${target}): no SOURCES")
  endif()
  if(NOT A_NAME)
    set(A_NAME ${target})
  endif()
  string(MAKE_C_IDENTIFIER "${A_NAME}" ident)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${ident}_device_code.c)
  set(args -o ${out} --name ${ident})
  if(A_COMPILE_OPTIONS)
    list(APPEND args --compile-options "${A_COMPILE_OPTIONS}")
  endif()
  if(A_LINK_OPTIONS)
    list(APPEND args --link-options "${A_LINK_OPTIONS}")
  endif()
  foreach(s ${A_EXPORTS})
    list(APPEND args --export ${s})
  endforeach()
  foreach(s ${A_IMPORTS})
    list(APPEND args --import ${s})
  endforeach()
  set(files)
  foreach(f ${A_SOURCES})
    get_filename_component(abs ${f} ABSOLUTE)
    list(APPEND files ${abs})
  endforeach()
  add_custom_command(OUTPUT ${out}
    COMMAND pitrace_embed ${args} ${files}
    DEPENDS pitrace_embed ${files}
    COMMENT "Embedding device code of ${target}: ${A_SOURCES}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
  if(A_NO_RUNTIME_LINK)
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
  else()
    target_link_libraries(${target} PRIVATE pirt)
  endif()
endfunction()
