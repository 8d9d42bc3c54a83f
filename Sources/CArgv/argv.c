// The argument vector for `chime`, as glibc hands it to the executable's initialisers.
//
// The static Swift runtime finds argv for `CommandLine` with an initialiser of its own that reads
// /proc/self/maps with fopen and sscanf to locate the stack and walks back from `environ`: 106,000
// of the 1.1 million instructions a `chime notify` runs, and four system calls, at every start
// (docs/BENCHMARKS.md, issue 25). glibc calls each function in an executable's .init_array with
// (argc, argv, envp) before main, so the vector can simply be kept. Defining the two functions the
// runtime's CommandLine object file defines keeps the linker from taking that object (and its
// initialiser) out of libswiftCore.a; `make release` reads the link map to check that it was left
// out. Were a later runtime to define more in that object, the link would fail on a duplicate
// symbol, not misbehave.
//
// Only glibc is known to pass those arguments (the C standard and POSIX do not; musl calls
// initialisers with none): elsewhere this file defines nothing, and the runtime's own search runs.
#include <stdlib.h>
#include "argv.h"

#if defined(__GLIBC__) && defined(__linux__)
static int argumentCount;
static char **argumentVector;

static void keepArguments(int argc, char **argv, char **envp) {
    (void)envp;
    argumentCount = argc;
    argumentVector = argv;
}

__attribute__((used, section(".init_array"))) static void (*const keepArgumentsAtStart)(int, char **, char **) = keepArguments;

char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    *outArgLen = argumentCount;
    return argumentVector;
}

void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    argumentVector = argv;
    argumentCount = argc;
}
#endif
