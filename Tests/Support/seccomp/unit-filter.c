// Runs a command under a systemd unit's sandbox as systemd applies it before exec: the unit's UMask=,
// NoNewPrivileges=yes and its SystemCallFilter= as a seccomp allow list whose default action kills the process
// with SIGSYS (exit status 159 from a shell), as systemd's does. SQLCipherKit's own test tool
// (CLITests/SystemdExampleTests), built by the test with `cc unit-filter.c -lseccomp` (Debian's libseccomp-dev).
//
//     unit-filter ALLOWED-FILE UMASK COMMAND [ARGUMENT...]
//
// ALLOWED-FILE lists the system calls the unit allows, one name a line (unit_syscalls.py writes it from the unit
// and systemd-analyze's own groups); a name this machine's libseccomp does not know is passed over, as systemd
// does. A line `!name` makes that call fail with EAFNOSUPPORT instead (RestrictAddressFamilies=none: `!socket`).
// UMASK is octal.
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: unit-filter ALLOWED-FILE UMASK COMMAND [ARGUMENT...]\n");
        return 2;
    }
    FILE *list = fopen(argv[1], "r");
    if (!list) {
        perror(argv[1]);
        return 2;
    }
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!filter) {
        fprintf(stderr, "unit-filter: seccomp_init failed\n");
        return 2;
    }
    char line[256];
    int allowed = 0;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        int refused = line[0] == '!';
        int number = seccomp_syscall_resolve_name(line + refused);
        if (number == __NR_SCMP_ERROR) continue;
        if (refused) {
            if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(EAFNOSUPPORT), number, 0) != 0) {
                fprintf(stderr, "unit-filter: cannot refuse %s\n", line + refused);
                return 2;
            }
        } else if (seccomp_rule_add(filter, SCMP_ACT_ALLOW, number, 0) == 0) {
            allowed++;
        }
    }
    fclose(list);
    if (allowed == 0) {
        fprintf(stderr, "unit-filter: no system call allowed: %s\n", argv[1]);
        return 2;
    }
    umask((mode_t)strtol(argv[2], NULL, 8));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("unit-filter: PR_SET_NO_NEW_PRIVS");
        return 2;
    }
    int code = seccomp_load(filter);
    if (code != 0) {
        fprintf(stderr, "unit-filter: seccomp_load: %s\n", strerror(-code));
        return 2;
    }
    seccomp_release(filter);
    execv(argv[3], argv + 3);
    perror(argv[3]);
    return 127;
}
