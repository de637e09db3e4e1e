// A counting malloc for the engine bench and its zero-allocation test: the program's own
// malloc family interposes glibc's (and so catches operator new) and forwards to __libc_*.
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "tests/kvfdpd/bench_rig.hpp"

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);
}

namespace {
std::atomic<uint64_t> g_allocs{0};
void count()
{
	g_allocs.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

uint64_t kvfdp::test::allocation_count()
{
	return g_allocs.load(std::memory_order_relaxed);
}

extern "C" {
void *malloc(size_t n)
{
	count();
	return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
	count();
	return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
	count();
	return __libc_realloc(p, n);
}
void free(void *p)
{
	__libc_free(p);
}
void *memalign(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	count();
	void *p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
}
