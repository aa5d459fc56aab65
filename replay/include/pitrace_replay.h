/*
 * pitrace_replay.h: the replay verbs of the pitrace command (replay/,
 * docs/replay.md), with the conventions of every verb (pitrace_cli.h):
 * argv[0] is the verb, the return value the exit status.
 */
#ifndef PITRACE_REPLAY_H
#define PITRACE_REPLAY_H

/* pitrace replay: re-issues a recorded session on a device (replay.c). */
int pt_replay(int argc, char **argv);
/* pitrace extract: cuts a session down to one kernel launch (extract.c). */
int pt_extract(int argc, char **argv);

#endif /* PITRACE_REPLAY_H */
