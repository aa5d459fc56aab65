/*
 * fork_app: an OpenCL application (plain OpenCL 1.2, run through the
 * front end) that forks after using a queue; the child makes one call on
 * it and ends with exit() (its atexit handlers run), the parent waits for
 * it. On rusticl the child's exit joins the queue's worker thread, which
 * did not come along into the child: a thread the recorder or the trace
 * started in the child must not be taken for it (pi_thread.h says how it
 * was).
 *
 *   fork_app
 *
 * Prints "fork_app: child exited 0"; exit 0 when it did, 1 when not, 2
 * OpenCL failed.
 */
#define CL_APP_NAME "fork_app"
#include "cl_app.h"
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
  cl_device_id device;
  cl_context ctx;
  cl_command_queue q;
  cl_int err;
  if (cl_app_open(&device, &ctx, &q))
    return 2;
  float data[256] = {1.0f};
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data,
                              &err);
  TRY("clCreateBuffer", err);
  TRY("clFinish", clFinish(q));
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork_app: fork");
    return 2;
  }
  if (pid == 0) {
    clFlush(q);
    exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  clReleaseMemObject(buf);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    printf("fork_app: child ended with status %d\n", st);
    return 1;
  }
  printf("fork_app: child exited 0\n");
  return 0;
}
