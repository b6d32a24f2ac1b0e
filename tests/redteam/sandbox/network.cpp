// Sandbox red team: opens a TCP connection to a listener of the test on the loopback
// (@PORT@), through pointers to socket and connect.
// expect: network | no connection reaches the listener and the candidate passes
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "@BODY@"

static int cheat(void) {
  int (*mk)(int, int, int) = socket;
  int (*cn)(int, const struct sockaddr*, socklen_t) = connect;
  const int fd = mk(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  struct sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(@PORT@);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int ok = cn(fd, (const struct sockaddr*)&a, sizeof a) == 0;
  close(fd);
  return ok;
}
