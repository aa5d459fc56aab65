/*
 * fuzz_config: the plugins config parser (SYCL_PI_CONFIG files,
 * runtime/src/plugins.c: pirt_config_parse_line). The input is a config
 * file; it is cut into lines as load_config reads them (fgets: at most
 * PIRT_CONFIG_LINE_MAX - 1 bytes, ending at a newline) and every line is
 * parsed, with the level-1 trace on (into /dev/null) so that the lines the
 * parser reports are formatted too. Nothing is loaded.
 *
 * Checks: a line that names a plugin has a library; every field is a
 * terminated string within its buffer; a backend names at most one backend.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pirt_config.h"
#include "pirt_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  setenv("SYCL_PI_TRACE", "1", 1);
  setenv("SYCL_PI_TRACE_FILE", "/dev/null", 1);
  pirt_trace_init();
  return 0;
}

static void check_field(const char *s, size_t cap)
{
  if (memchr(s, 0, cap) == NULL)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char line[PIRT_CONFIG_LINE_MAX];
  static pirt_config_line c;
  unsigned lineno = 0;
  size_t i = 0;
  while (i < size) {
    size_t n = 0;
    while (i < size && n < sizeof line - 1) {
      char ch = (char)data[i++];
      line[n++] = ch;
      if (ch == '\n')
        break;
    }
    line[n] = 0;
    if (!pirt_config_parse_line(line, "fuzz.conf", ++lineno, &c))
      continue;
    check_field(c.lib, sizeof c.lib);
    check_field(c.backend, sizeof c.backend);
    check_field(c.target, sizeof c.target);
    check_field(c.options, sizeof c.options);
    if (!c.lib[0] || strpbrk(c.lib, " \t\r\n#") || strchr(c.backend, '='))
      abort();
    (void)pirt_backend_from_name(c.backend);
  }
  return 0;
}
