# 1 "item10-system-header.d"
# 1 "<built-in>" 1
# 1 "item10-system-header.d"
/* What cpp makes of `#include <sys/types.h>`: a system header (flag 3) in GNU C.
   What the parser cannot read there (register_t, fd_set) is left unchecked. */
# 1 "/usr/include/x86_64-linux-gnu/sys/fake.h" 1 3 4
typedef unsigned int __u32_t;
typedef __u32_t socklen_like_t;
typedef int register_t __attribute__ ((__mode__ (__word__)));
typedef unsigned char __uint8_t;
typedef __uint8_t uint8_t;
__extension__ typedef long long int __quad_t;
typedef struct { long int __fds_bits[1024 / (8 * (int) sizeof (long int))]; } fd_set;
struct timeval { long tv_sec; long tv_usec; };
extern int select (int __nfds, fd_set *__restrict __readfds) __attribute__ ((__nothrow__));
static __inline unsigned short __bswap_16 (unsigned short __bsx) { return __builtin_bswap16 (__bsx); }
extern char *optarg;
} stray closer;
# 3 "item10-system-header.d" 2

provider sh {
	probe p(socklen_like_t, uint8_t, __quad_t, struct timeval, fd_set *, register_t);
};
