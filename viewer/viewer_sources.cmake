# The viewer verbs' sources (sessions, show, stats, diff, export, report).
set(PITRACE_VIEWER_SOURCES
  viewer_common.c viewer_args.c viewer_pack.c viewer_align.c
  viewer_sessions.c viewer_show.c viewer_stats.c viewer_diff.c viewer_export.c
  viewer_report.c ${CMAKE_CURRENT_BINARY_DIR}/viewer_report_page.c)

# The report's page (viewer_report.html) goes into the command as a C array,
# regenerated when the page changes.
set(viewer_page ${CMAKE_CURRENT_SOURCE_DIR}/viewer_report.html)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${viewer_page})
file(READ ${viewer_page} viewer_page_hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," viewer_page_hex "${viewer_page_hex}")
string(REGEX REPLACE "((0x..,){24})" "\\1\n" viewer_page_hex "${viewer_page_hex}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/viewer_report_page.c.new
  "/* Generated from viewer/viewer_report.html by viewer/viewer_sources.cmake. */\n"
  "#include <stddef.h>\n"
  "const unsigned char vw_report_page[] = {\n${viewer_page_hex}0x00};\n"
  "const size_t vw_report_page_len = sizeof vw_report_page - 1;\n")
configure_file(${CMAKE_CURRENT_BINARY_DIR}/viewer_report_page.c.new
  ${CMAKE_CURRENT_BINARY_DIR}/viewer_report_page.c COPYONLY)
