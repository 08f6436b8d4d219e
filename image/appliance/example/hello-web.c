/*
 * hello-web: the example program `appliance init` puts in a new project. A small static web server: it serves the
 * files of one directory over HTTP/1.0 and logs each request on stdout (`cosictl logs hello`). Static, so that its
 * extension's root needs nothing else; it is what a person replaces with their own program.
 *
 *   hello-web PORT DIRECTORY
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

static const char *content_type(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return "application/octet-stream";
  if (!strcmp(dot, ".html")) return "text/html; charset=utf-8";
  if (!strcmp(dot, ".css")) return "text/css";
  if (!strcmp(dot, ".js")) return "text/javascript";
  if (!strcmp(dot, ".txt")) return "text/plain; charset=utf-8";
  if (!strcmp(dot, ".svg")) return "image/svg+xml";
  if (!strcmp(dot, ".png")) return "image/png";
  return "application/octet-stream";
}

static void write_all(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w <= 0) return;
    data += w;
    n -= (size_t)w;
  }
}

static void answer(int fd, int status, const char *reason, const char *type, long length) {
  char head[256];
  int n = snprintf(head, sizeof head, "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %ld\r\n"
                   "Connection: close\r\n\r\n", status, reason, type, length);
  write_all(fd, head, (size_t)n);
}

static void serve(int fd, const char *root) {
  char request[4096];
  ssize_t got = read(fd, request, sizeof request - 1);
  if (got <= 0) return;
  request[got] = 0;
  char method[8], target[1024];
  if (sscanf(request, "%7s %1023s", method, target) != 2 || strcmp(method, "GET")) {
    answer(fd, 400, "Bad Request", "text/plain", 12);
    write_all(fd, "bad request\n", 12);
    printf("%.40s: 400\n", request);
    return;
  }
  char *query = strchr(target, '?');
  if (query) *query = 0;
  if (target[0] != '/' || strstr(target, "..")) {
    answer(fd, 400, "Bad Request", "text/plain", 12);
    write_all(fd, "bad request\n", 12);
    printf("GET %s 400\n", target);
    return;
  }
  char path[2048];
  snprintf(path, sizeof path, "%s%s%s", root, target, target[strlen(target) - 1] == '/' ? "index.html" : "");
  int file = open(path, O_RDONLY);
  struct stat st;
  if (file < 0 || fstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (file >= 0) close(file);
    answer(fd, 404, "Not Found", "text/plain", 10);
    write_all(fd, "not found\n", 10);
    printf("GET %s 404\n", target);
    return;
  }
  answer(fd, 200, "OK", content_type(path), (long)st.st_size);
  char buf[16384];
  ssize_t n;
  while ((n = read(file, buf, sizeof buf)) > 0) write_all(fd, buf, (size_t)n);
  close(file);
  printf("GET %s 200\n", target);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: hello-web PORT DIRECTORY\n");
    return 2;
  }
  int port = atoi(argv[1]);
  if (port < 1 || port > 65535) {
    fprintf(stderr, "hello-web: port \"%s\": want 1-65535\n", argv[1]);
    return 2;
  }
  /* A client that goes away mid-answer must not end the server. */
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 16) != 0) {
    fprintf(stderr, "hello-web: cannot listen on port %d: %s\n", port, strerror(errno));
    return 1;
  }
  printf("hello-web: serving %s on port %d\n", argv[2], port);
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c < 0) continue;
    serve(c, argv[2]);
    close(c);
  }
}
