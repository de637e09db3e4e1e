// Logging: one formatted line per call, written with a single write(2) so lines from
// different threads do not interleave.
#include "common/log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <unistd.h>

namespace kvfdp::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::info)};
std::atomic<uint32_t> g_debug_mask{0};
const char *g_program = "kvfdp";

void vemit(const char *tag, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = std::snprintf(buf, sizeof(buf), "%s: %s", g_program, tag);
	if (n < 0)
		return;
	if (static_cast<size_t>(n) < sizeof(buf)) {
		int m = std::vsnprintf(buf + n, sizeof(buf) - static_cast<size_t>(n), fmt, ap);
		if (m > 0)
			n += m;
	}
	if (static_cast<size_t>(n) >= sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	ssize_t w = ::write(STDERR_FILENO, buf, static_cast<size_t>(n));
	(void)w;
}

}  // namespace

void set_level(Level l)
{
	g_level.store(static_cast<int>(l), std::memory_order_relaxed);
}
Level level()
{
	return static_cast<Level>(g_level.load(std::memory_order_relaxed));
}
void set_debug_mask(uint32_t mask)
{
	g_debug_mask.store(mask, std::memory_order_relaxed);
}
bool debug_enabled(uint32_t category)
{
	return (g_debug_mask.load(std::memory_order_relaxed) & category) != 0;
}
void set_program(const char *name)
{
	g_program = name;
}

#define KVFDP_LOG_AT(lvl, tag)                                                                     \
	do {                                                                                       \
		if (static_cast<int>(lvl) > g_level.load(std::memory_order_relaxed))               \
			return;                                                                    \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		vemit(tag, fmt, ap);                                                               \
		va_end(ap);                                                                        \
	} while (0)

void error(const char *fmt, ...)
{
	KVFDP_LOG_AT(Level::error, "error: ");
}
void warn(const char *fmt, ...)
{
	KVFDP_LOG_AT(Level::warn, "warning: ");
}
void info(const char *fmt, ...)
{
	KVFDP_LOG_AT(Level::info, "");
}

void debug(uint32_t category, const char *fmt, ...)
{
	if (!debug_enabled(category))
		return;
	va_list ap;
	va_start(ap, fmt);
	vemit("debug: ", fmt, ap);
	va_end(ap);
}

}  // namespace kvfdp::log
