/* The C client (servers.h) against a real redis-server: started, answering on its unix socket,
 * restarted on the same address, stopped with its files removed. Run by
 * tests/servers/test_servers.py: selftest <temporary directory>. */
#define _POSIX_C_SOURCE 200809L
#include "servers.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static int ping(const char *path) {
  struct sockaddr_un addr;
  char buf[16] = {0};
  int fd = socket(AF_UNIX, SOCK_STREAM, 0), ok;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  ok = fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 && write(fd, "PING\r\n", 6) == 6 &&
       read(fd, buf, sizeof buf - 1) >= 5 && strncmp(buf, "+PONG", 5) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

int main(int argc, char **argv) {
  TestServers s;
  const char *args[] = {"--no-tcp", NULL};
  char sock[512], dir[512];
  int pid, failures = 0;
  struct stat st;
  if (argc != 2) return 2;
  if (test_servers_start(&s, "redis", args, argv[1]) != 0) {
    printf("FAIL start: %s\n", s.error);
    return 1;
  }
  snprintf(sock, sizeof sock, "%s", test_servers_get(&s, "redis", "unix_socket", NULL)->valuestring);
  snprintf(dir, sizeof dir, "%s", test_servers_get(&s, "dir", NULL)->valuestring);
  pid = test_servers_get(&s, "redis", "pid", NULL)->valueint;
  if (!ping(sock)) printf("FAIL PING on %s\n", sock), failures++;
  if (test_servers_command(&s, "restart") != 0) printf("FAIL restart: %s\n", s.error), failures++;
  if (test_servers_get(&s, "redis", "pid", NULL)->valueint == pid) printf("FAIL the same pid after restart\n"), failures++;
  if (strcmp(test_servers_get(&s, "redis", "unix_socket", NULL)->valuestring, sock) != 0)
    printf("FAIL another address after restart\n"), failures++;
  if (!ping(sock)) printf("FAIL PING after restart\n"), failures++;
  if (test_servers_command(&s, "bogus") == 0 || strstr(s.error, "unknown command") == NULL)
    printf("FAIL a bad command: %s\n", s.error), failures++;
  test_servers_stop(&s);
  if (stat(dir, &st) == 0) printf("FAIL %s is still there\n", dir), failures++;
  if (ping(sock)) printf("FAIL still answering after stop\n"), failures++;
  printf("%s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
