# The record verb's sources.
set(PITRACE_RECORD_SOURCES record.c route_opencl.c)
