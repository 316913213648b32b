/*
 * The container `node.sh selftest` runs on the test node (built static, so its image is one file).
 * It reports what a pod sees, so that the self-test checks the kubelet and the runtime did what the
 * pod spec asked, and it takes part in the pod's life cycle:
 *
 *   probe             prints its uid/gid, effective capabilities and whether / is read-only;
 *                     writes probe.txt into each directory of $PROBE_WRITE (colon-separated);
 *                     connects to $PROBE_CONNECT (IPv4:port) if set; then waits. On SIGTERM it
 *                     appends "got SIGTERM" to $PROBE_SIGTERM_FILE, writes a termination message
 *                     and exits 0.
 *   probe true        exits 0 (an exec readiness probe).
 *   probe exit CODE MESSAGE
 *                     writes MESSAGE as the termination message and exits with CODE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *termination_log = "/dev/termination-log";

static void write_file(const char *path, const char *text, int append) {
  int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) {
    printf("probe: cannot open %s: %s\n", path, strerror(errno));
    return;
  }
  if (write(fd, text, strlen(text)) < 0) printf("probe: cannot write %s: %s\n", path, strerror(errno));
  close(fd);
}

static volatile sig_atomic_t terminated;
static void on_term(int signo) { (void)signo; terminated = 1; }

static void print_capabilities(void) {
  char line[256];
  FILE *status = fopen("/proc/self/status", "r");
  if (!status) return;
  while (fgets(line, sizeof line, status))
    if (!strncmp(line, "CapEff:", 7)) printf("probe: %s", line);
  fclose(status);
}

static void check_root_read_only(void) {
  int fd = open("/probe-write-test", O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) {
    close(fd);
    unlink("/probe-write-test");
    printf("probe: rootfs writable\n");
  } else {
    printf("probe: rootfs %s\n", errno == EROFS ? "read-only" : strerror(errno));
  }
}

static void write_into(const char *dirs) {
  char *list = strdup(dirs), *save = NULL, *dir;
  for (dir = strtok_r(list, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/probe.txt", dir);
    write_file(path, "written by probe\n", 0);
    if (stat(path, &st) == 0) printf("probe: wrote %s\n", path);
  }
  free(list);
}

static void connect_to(const char *target) {
  char host[64];
  const char *colon = strrchr(target, ':');
  struct sockaddr_in addr = {.sin_family = AF_INET};
  int fd;
  if (!colon || (size_t)(colon - target) >= sizeof host) {
    printf("probe: bad PROBE_CONNECT %s\n", target);
    return;
  }
  memcpy(host, target, colon - target);
  host[colon - target] = 0;
  addr.sin_port = htons((unsigned short)atoi(colon + 1));
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    printf("probe: bad address %s\n", host);
    return;
  }
  fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0)
    printf("probe: connect %s ok\n", target);
  else
    printf("probe: connect %s failed: %s\n", target, strerror(errno));
  if (fd >= 0) close(fd);
}

int main(int argc, char **argv) {
  const char *env;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && !strcmp(argv[1], "true")) return 0;
  if (argc >= 4 && !strcmp(argv[1], "exit")) {
    write_file(termination_log, argv[3], 0);
    printf("probe: exiting with %s\n", argv[2]);
    return atoi(argv[2]);
  }

  /* SIGTERM stays blocked except inside sigsuspend, so one arriving before the wait is not lost. */
  sigset_t term, unblocked;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &unblocked);
  sigdelset(&unblocked, SIGTERM);
  signal(SIGTERM, on_term);
  printf("probe: uid=%d gid=%d\n", (int)getuid(), (int)getgid());
  print_capabilities();
  check_root_read_only();
  if ((env = getenv("PROBE_WRITE"))) write_into(env);
  if ((env = getenv("PROBE_CONNECT"))) connect_to(env);
  printf("probe: waiting for SIGTERM\n");
  while (!terminated) sigsuspend(&unblocked);
  printf("probe: got SIGTERM\n");
  if ((env = getenv("PROBE_SIGTERM_FILE"))) write_file(env, "got SIGTERM\n", 1);
  write_file(termination_log, "stopped by SIGTERM", 0);
  return 0;
}
