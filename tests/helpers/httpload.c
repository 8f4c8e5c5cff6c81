/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpload.c - sends N requests over one keep-alive connection and checks each status, for
 * the server's memory test (tests/http/rss.sh): a client fast enough that 20,000 requests per
 * endpoint take seconds, not the minutes that a curl process per request would.
 *
 *   httpload HOST PORT COUNT STATUS METHOD PATH [BODYFILE]
 *
 * Exits 0 when every answer had STATUS, 1 (with the first bad answer's status) otherwise.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int connect_to(const char *host, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((unsigned short)port);
    if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        perror("httpload: connect");
        exit(1);
    }
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k <= 0) {
            perror("httpload: write");
            exit(1);
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Reads one response: the status; the body (Content-Length) is read and dropped. */
static int read_response(int fd, char *buf, size_t cap, size_t *have)
{
    for (;;) {
        buf[*have] = 0;
        char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            int status = 0;
            sscanf(buf, "HTTP/1.%*d %d", &status);
            size_t len = 0;
            for (char *h = buf; h < end; h = strstr(h, "\r\n") + 2)
                if (!strncasecmp(h, "Content-Length:", 15))
                    len = strtoul(h + 15, NULL, 10);
            size_t head = (size_t)(end + 4 - buf);
            while (*have < head + len) { /* the rest of the body, dropped as it comes */
                size_t room = cap - 1 - *have;
                if (!room) {
                    len -= *have - head;
                    *have = head;
                    room = cap - 1 - *have;
                }
                ssize_t k = read(fd, buf + *have, room);
                if (k <= 0)
                    return -1;
                *have += (size_t)k;
            }
            size_t used = head + len;
            memmove(buf, buf + used, *have - used);
            *have -= used;
            return status;
        }
        if (*have + 1 >= cap)
            return -1;
        ssize_t k = read(fd, buf + *have, cap - 1 - *have);
        if (k <= 0)
            return -1;
        *have += (size_t)k;
    }
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: httpload HOST PORT COUNT STATUS METHOD PATH [BODYFILE]\n");
        return 2;
    }
    int port = atoi(argv[2]);
    long count = atol(argv[3]);
    int want = atoi(argv[4]);
    char *body = NULL;
    size_t body_len = 0;
    if (argc > 7) {
        FILE *f = fopen(argv[7], "rb");
        if (!f) {
            perror(argv[7]);
            return 2;
        }
        body = malloc(1 << 24);
        body_len = fread(body, 1, 1 << 24, f);
        fclose(f);
    }
    /* the request in one buffer, written at once (two writes meet Nagle's algorithm and the
     * peer's delayed ACK: 40 ms a request) */
    char *req = malloc(4096 + body_len);
    if (!req)
        return 2;
    int n = snprintf(req, 4096, "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Length: %zu\r\n\r\n",
                     argv[5], argv[6], argv[1], port, body_len);
    if (n < 0 || n >= 4096)
        return 2;
    if (body_len)
        memcpy(req + n, body, body_len);
    n += (int)body_len;
    static char buf[1 << 16];
    size_t have = 0;
    int fd = connect_to(argv[1], port);
    long reconnects = 0;
    for (long i = 0; i < count; i++) {
        send_all(fd, req, (size_t)n);
        int status = read_response(fd, buf, sizeof buf, &have);
        if (status < 0) { /* the server closed the connection: open another */
            if (++reconnects > 1000) {
                fprintf(stderr, "httpload: the server keeps closing the connection\n");
                return 1;
            }
            close(fd);
            fd = connect_to(argv[1], port);
            have = 0;
            i--;
            continue;
        }
        if (status != want) {
            fprintf(stderr, "httpload: request %ld: status %d, want %d\n", i + 1, status, want);
            return 1;
        }
    }
    close(fd);
    free(body);
    free(req);
    return 0;
}
