/* Signals do not exist in the Hexagon oracle (written for Hexscope): a crash ends the qemu
 * process and oracle_hvx.py restarts it. These let driver/oracle.c compile unchanged. */
#ifndef HX_SIGNAL_H
#define HX_SIGNAL_H 1
#define SIGSEGV 11
#define SIGBUS 7
#define SIG_DFL ((void (*)(int))0)
struct sigaction { void (*sa_handler)(int); int sa_flags; };
static inline int sigaction(int s, const struct sigaction *a, struct sigaction *o) { (void)s; (void)a; if (o) o->sa_handler = 0; return 0; }
static inline void (*signal(int s, void (*h)(int)))(int) { (void)s; (void)h; return 0; }
static inline int raise(int s) { (void)s; return 0; }
#endif
