// Logging to stderr with levels and a debug-category bitmask.
// Never call from a per-I/O path: hot paths count, and the counters are logged off the path.
#pragma once

#include <cstdint>

namespace kvfdp::log {

enum class Level : int { error = 0, warn = 1, info = 2, debug = 3 };

// Debug categories, enabled with set_debug_mask (kvfdpd --debug MASK).
enum Category : uint32_t {
	kCatUblk = 1u << 0,
	kCatNvme = 1u << 1,
	kCatBpf = 1u << 2,
	kCatPolicy = 1u << 3,
	kCatCtl = 1u << 4,
	kCatModel = 1u << 5,
};

void set_level(Level level);
[[nodiscard]] Level level();
void set_debug_mask(uint32_t mask);
[[nodiscard]] bool debug_enabled(uint32_t category);
// Prefix every line with this program name ("kvfdpd: ...").
void set_program(const char *name);

void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Printed only when the category's bit is set in the debug mask.
void debug(uint32_t category, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace kvfdp::log
