/*
 * The uid of the process at the other end of a loopback TCP connection.
 * The Unix socket has SO_PEERCRED; TCP has no such option, but both ends of
 * a loopback connection are sockets of this kernel, and its socket table
 * (NETLINK_SOCK_DIAG, what ss(8) reads) names the uid that created each
 * one, as identd answers for its host.
 */
#ifndef DLPROF_PEER_UID_H
#define DLPROF_PEER_UID_H

#include <sys/types.h>

/*
 * fd: our end of an accepted TCP connection from a loopback address.
 * Returns 0 with *uid the creator of the peer's socket, or -1 (logged at
 * debug level: the caller then treats the uid as unknown).
 */
int peer_uid_tcp(int fd, uid_t *uid);

#endif
