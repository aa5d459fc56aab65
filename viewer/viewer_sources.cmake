# The viewer verbs' sources (sessions, show, stats, diff, export, report).
set(PITRACE_VIEWER_SOURCES pending_viewer.c)
