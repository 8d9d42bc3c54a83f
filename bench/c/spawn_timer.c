/* Times whole commands, alternating between them round by round, with
 * posix_spawn and wait4: wall time and peak RSS of each run.
 * Each round runs the commands in a fresh random order (seeded: a run repeats). What ran just
 * before a command changes its start-up by several per cent (the caches it leaves warm or cold:
 * after notify-send, which loads GLib, a start is slower than after dbus-send); in a fixed order
 * one command would always follow the same one, and the ratios would measure the order.
 * Usage: spawn_timer ROUNDS -- NAME CMD ARGS... -- NAME CMD ARGS... */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>

extern char **environ;

typedef struct { char *name; char **argv; double *ms; long *rss; } Command;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int compare_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: spawn_timer ROUNDS -- NAME CMD... [-- NAME CMD...]\n"); return 2; }
    int rounds = atoi(argv[1]);
    Command commands[16];
    int count = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0 && i + 2 < argc) {
            if (count == 16) { fprintf(stderr, "spawn_timer: at most 16 commands\n"); return 2; }
            commands[count].name = argv[i + 1];
            commands[count].argv = &argv[i + 2];
            commands[count].ms = calloc(rounds, sizeof(double));
            commands[count].rss = calloc(rounds, sizeof(long));
            argv[i] = NULL; /* terminates the previous command's argv */
            count++;
            i++;
        }
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    for (int warm = 0; warm < 5; warm++)
        for (int c = 0; c < count; c++) {
            pid_t pid;
            int status;
            posix_spawnp(&pid, commands[c].argv[0], &actions, NULL, commands[c].argv, environ);
            waitpid(pid, &status, 0);
        }
    int order[16];
    for (int c = 0; c < count; c++) order[c] = c;
    srand48(25);
    for (int r = 0; r < rounds; r++) {
        for (int i = count - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)(drand48() * (i + 1));
            int t = order[i]; order[i] = order[j]; order[j] = t;
        }
        for (int i = 0; i < count; i++) {
            int c = order[i];
            pid_t pid;
            int status;
            struct rusage usage;
            double start = now_ms();
            if (posix_spawnp(&pid, commands[c].argv[0], &actions, NULL, commands[c].argv, environ) != 0) {
                fprintf(stderr, "cannot start %s\n", commands[c].argv[0]);
                return 1;
            }
            wait4(pid, &status, 0, &usage);
            commands[c].ms[r] = now_ms() - start;
            commands[c].rss[r] = usage.ru_maxrss;
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "%s failed (status %d)\n", commands[c].name, status);
                return 1;
            }
        }
    }
    for (int c = 0; c < count; c++) {
        qsort(commands[c].ms, rounds, sizeof(double), compare);
        qsort(commands[c].rss, rounds, sizeof(long), compare_long);
        printf("%s %.3f %.3f %ld\n", commands[c].name, commands[c].ms[rounds / 2], commands[c].ms[rounds * 9 / 10],
               commands[c].rss[rounds - 1]);
    }
    return 0;
}
