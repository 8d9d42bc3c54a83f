#ifndef CHIME_ARGV_H
#define CHIME_ARGV_H
// Nothing to call: linking this module is what it does, with glibc (see argv.c).
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);
#endif
