// The kvgpu benches' shared measurements: raw O_DIRECT file write/read bandwidth over io_uring,
// evict and load bandwidth through libkvgpu, and the ratio against the 90% goal, as JSON.
#pragma once

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "tests/kvgpu/kvgpu_test_util.hpp"

namespace kvfdp::gpu::bench {

inline constexpr double kGoal = 0.90;  // evict >= 90% of min(copy bw, file write bw)

inline double now_s()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

inline double gbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? double(bytes) / seconds / 1e9 : 0;
}

// The comparison point for evicts: chunk files written the way libkvgpu writes them (create,
// fallocate, the header block and the padded payload in piece_bytes O_DIRECT writes, `depth`
// in flight over io_uring across files, close), minus the copy, the checksum and the rename.
// Returns payload bytes per second, or a negative errno. read = true reads the files back
// instead (they must exist: call with read = false first). Files are named raw-<i> in dir, or
// paths[i] when paths is given (reads of other files, e.g. a store's own chunk files).
inline double raw_files(const std::string &dir, uint64_t chunk, unsigned count,
			unsigned piece_bytes, unsigned depth, bool direct, bool read,
			const std::vector<std::string> *paths = nullptr)
{
	const uint64_t fbytes = file_bytes(chunk);
	void *buf = std::aligned_alloc(kBlock, size_t(depth) * piece_bytes);
	if (!buf)
		return -ENOMEM;
	std::memset(buf, 0x5a, size_t(depth) * piece_bytes);
	io_uring ring{};
	if (int e = io_uring_queue_init(std::max(depth, 8u), &ring, 0); e < 0) {
		std::free(buf);
		return e;
	}
	std::vector<int> fds(count, -1);
	std::vector<uint64_t> left(count, 0);  // pieces of each file not yet completed
	std::vector<unsigned> free_bufs;
	for (unsigned i = 0; i < depth; i++)
		free_bufs.push_back(i);
	int err = 0;
	unsigned file = 0, in_flight = 0, closed = 0;
	uint64_t off = 0;  // next offset in the current file
	const double t0 = now_s();
	while (closed < count && err == 0) {
		// Queue pieces while buffers are free.
		while (!free_bufs.empty() && file < count) {
			if (fds[file] < 0) {
				std::string p = paths ? (*paths)[file]
						      : dir + "/raw-" + std::to_string(file);
				int flags = (read ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC) |
					    O_CLOEXEC | (direct ? O_DIRECT : 0);
				fds[file] = ::open(p.c_str(), flags, 0644);
				if (fds[file] < 0) {
					err = -errno;
					break;
				}
				if (!read && ::fallocate(fds[file], 0, 0, off_t(fbytes)) != 0 &&
				    errno != EOPNOTSUPP) {
					err = -errno;
					break;
				}
				off = 0;
			}
			unsigned b = free_bufs.back();
			free_bufs.pop_back();
			unsigned len = unsigned(std::min<uint64_t>(piece_bytes, fbytes - off));
			io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			char *p = static_cast<char *>(buf) + size_t(b) * piece_bytes;
			if (read)
				io_uring_prep_read(sqe, fds[file], p, len, off);
			else
				io_uring_prep_write(sqe, fds[file], p, len, off);
			io_uring_sqe_set_data64(sqe, (uint64_t(file) << 32) | b);
			left[file]++;
			in_flight++;
			off += len;
			if (off == fbytes)
				file++;
		}
		if (err)
			break;
		io_uring_submit_and_wait(&ring, 1);
		io_uring_cqe *cqe = nullptr;
		unsigned head = 0, seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			uint64_t ud = io_uring_cqe_get_data64(cqe);
			unsigned f = unsigned(ud >> 32);
			if (cqe->res <= 0 && err == 0)
				err = cqe->res < 0 ? cqe->res : -EIO;
			free_bufs.push_back(unsigned(ud & 0xffffffffu));
			in_flight--;
			if (--left[f] == 0 && (f < file)) {
				::close(fds[f]);
				fds[f] = -1;
				closed++;
			}
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
	}
	const double t1 = now_s();
	while (in_flight > 0) {
		io_uring_cqe *cqe = nullptr;
		if (io_uring_wait_cqe(&ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(&ring, cqe);
		in_flight--;
	}
	for (int fd : fds)
		if (fd >= 0)
			::close(fd);
	io_uring_queue_exit(&ring);
	std::free(buf);
	if (err)
		return err;
	return gbps(chunk * count, t1 - t0) * 1e9;
}

inline void remove_raw_files(const std::string &dir, unsigned count)
{
	for (unsigned i = 0; i < count; i++)
		::unlink((dir + "/raw-" + std::to_string(i)).c_str());
}

// Where the payload lives: host memory (host engine) or device memory (CUDA engine).
struct Buffers {
	char *src = nullptr;  // count * chunk bytes of patterned data
	char *dst = nullptr;  // count * chunk bytes for loads
	// Bandwidth of the engine's raw copy (memcpy or D2H cudaMemcpyAsync into pinned memory)
	// over total bytes in piece_bytes pieces, bytes per second.
	std::function<double(uint64_t total, unsigned piece_bytes)> copy_bw;
	// The same for the load direction (H2D from pinned memory); optional.
	std::function<double(uint64_t total, unsigned piece_bytes)> copy_back_bw;
	// True when dst[off, off + n) equals src[off, off + n).
	std::function<bool(uint64_t off, uint64_t n)> same;
};

// One target directory, one chunk size: evicts of count chunks then loads of all of them.
struct Result {
	std::string target, fs, engine;
	uint64_t chunk = 0;
	unsigned count = 0;
	bool direct = false;
	double copy = 0, file_write = 0, file_read = 0, evict = 0, load = 0;  // bytes per second
	double copy_back = 0;  // H2D (0: not measured)
	uint64_t max_io_in_flight = 0, max_copies_in_flight = 0;
	bool verified = false;
	std::string error;  // empty when the figures are valid

	void fail_kvgpu(int64_t code)
	{
		if (error.empty() && code < 0)
			error = kvgpu_strerror(int(code));
	}
	void fail_errno(double neg_errno, const char *what)
	{
		if (error.empty())
			error = std::string(what) + ": " + std::strerror(int(-neg_errno));
	}

	[[nodiscard]] double ratio() const
	{
		double lim = std::min(copy, file_write);
		return lim > 0 ? evict / lim : 0;
	}
	[[nodiscard]] nlohmann::json to_json() const
	{
		auto g = [](double v) {
			return double(int64_t(v / 1e6 + 0.5)) / 1e3;
		};  // GB/s, 3 decimals
		nlohmann::json j = {
			{"target", target},
			{"fs", fs},
			{"engine", engine},
			{"chunk_bytes", chunk},
			{"chunks", count},
			{"direct_io", direct},
			{"copy_gbps", g(copy)},
			{"file_write_gbps", g(file_write)},
			{"file_read_gbps", g(file_read)},
			{"evict_gbps", g(evict)},
			{"load_gbps", g(load)},
			{"evict_over_min_copy_file", double(int64_t(ratio() * 1000 + 0.5)) / 1000},
			{"goal", kGoal},
			{"meets_goal", ratio() >= kGoal},
			{"max_io_in_flight", max_io_in_flight},
			{"max_copies_in_flight", max_copies_in_flight},
			{"verified", verified}};
		if (copy_back > 0)
			j["copy_back_gbps"] = g(copy_back);
		if (!error.empty())
			j["error"] = error;
		return j;
	}
};

// Runs every measurement for one chunk size in dir with the store options o.
// evict_first runs the library before the raw files (on a fresh filesystem whichever runs
// first allocates new blocks, so run_matrix alternates the order between repetitions).
inline Result measure(const std::string &target, const std::string &fs, const std::string &dir,
		      const kvgpu_options &o, uint64_t chunk, unsigned count, Buffers &buf,
		      bool evict_first)
{
	Result r;
	r.target = target;
	r.fs = fs;
	r.chunk = chunk;
	r.count = count;
	const uint64_t total = chunk * count;
	kvgpu_ctx *ctx = nullptr;
	if (int rc = kvgpu_open(dir.c_str(), &o, &ctx); rc < 0) {
		r.fail_kvgpu(rc);
		return r;
	}
	kvgpu_stats_t st{};
	(void)kvgpu_stats(ctx, &st);
	r.direct = st.direct_io != 0;
	r.engine = st.engine == KVGPU_ENGINE_CUDA ? "cuda" : "host";

	r.copy = buf.copy_bw(total, o.slot_bytes);
	if (buf.copy_back_bw)
		r.copy_back = buf.copy_back_bw(total, o.slot_bytes);
	auto raw = [&] {
		double fw = raw_files(dir, chunk, count, o.slot_bytes, o.slots, r.direct, false);
		double fr =
			fw > 0 ? raw_files(dir, chunk, count, o.slot_bytes, o.slots, r.direct, true)
			       : fw;
		remove_raw_files(dir, count);
		if (fw < 0 || fr < 0)
			r.fail_errno(fw < 0 ? fw : fr, fw < 0 ? "raw file write" : "raw file read");
		r.file_write = std::max(fw, 0.0);
		r.file_read = std::max(fr, 0.0);
	};
	auto key = [&](unsigned i) {
		return "bench-" + std::to_string(chunk) + "-" + std::to_string(i);
	};
	auto lib = [&] {
		double t0 = now_s();
		for (unsigned i = 0; i < count && r.error.empty(); i++)
			r.fail_kvgpu(kvgpu_evict(ctx, buf.src + i * chunk, chunk, key(i).c_str(),
						 KVGPU_LIFETIME_SHORT, nullptr));
		int w = kvgpu_wait(ctx, 0);
		double t1 = now_s();
		r.fail_kvgpu(w);
		r.evict = gbps(total, t1 - t0) * 1e9;

		t0 = now_s();
		for (unsigned i = 0; i < count && r.error.empty(); i++) {
			int64_t n = kvgpu_load(ctx, key(i).c_str(), buf.dst + i * chunk, chunk,
					       nullptr);
			r.fail_kvgpu(n == int64_t(chunk) || n < 0 ? n : int64_t(KVGPU_ERR_SIZE));
		}
		t1 = now_s();
		r.load = gbps(total, t1 - t0) * 1e9;
	};
	if (evict_first) {
		lib();
		raw();
	} else {
		raw();
		lib();
	}
	if (!r.error.empty()) {
		(void)kvgpu_close(ctx);
		return r;
	}
	r.verified = r.error.empty() && buf.same(0, total);
	(void)kvgpu_stats(ctx, &st);
	r.max_io_in_flight = st.max_io_in_flight;
	r.max_copies_in_flight = st.max_copies_in_flight;
	for (unsigned i = 0; i < count; i++)
		(void)kvgpu_remove(ctx, key(i).c_str());
	r.fail_kvgpu(kvgpu_close(ctx));
	return r;
}

// "  ext4-loop  4194304 B x 64: copy 9.1, file 2.0 / 2.5, evict 1.9, load 2.2 GB/s; ratio 0.95".
inline std::string describe(const Result &r)
{
	char line[320];
	std::snprintf(
		line, sizeof(line),
		"%-10s %-6s %9llu B x %3u (%s): copy %6.2f  file w %6.2f r %6.2f  evict %6.2f  load %6.2f GB/s"
		"  evict/min(copy,file) %.2f%s",
		r.target.c_str(), r.engine.c_str(), static_cast<unsigned long long>(r.chunk),
		r.count, r.direct ? "O_DIRECT" : "buffered", r.copy / 1e9, r.file_write / 1e9,
		r.file_read / 1e9, r.evict / 1e9, r.load / 1e9, r.ratio(),
		r.error.empty() ? "" : "  ERROR: ");
	return line + r.error;
}

// A directory to measure in, with a short name for the tables ("tmpfs", "ext4-loop").
struct Target {
	std::string name, dir;
};

// Measures every chunk size in every target (floor(total / size) chunks each, reps times, the
// best of each figure kept), printing a line per result to stdout.
inline std::vector<Result> run_matrix(const std::vector<Target> &targets,
				      const std::vector<uint64_t> &sizes, uint64_t total,
				      unsigned reps, const kvgpu_options &o, Buffers &buf,
				      const std::function<std::string(const std::string &)> &fs_of)
{
	std::vector<Result> out;
	const char *only = std::getenv("KVGPU_BENCH_ONLY");  // one target name, for quick looks
	for (const Target &t : targets) {
		if (only && *only && t.name != only)
			continue;
		// Write and delete 2 x total first (untimed): the first writes to a fresh filesystem
		// (and to a loop device's sparse backing file) allocate blocks that later ones reuse.
		constexpr uint64_t kFill = 64u << 20;
		unsigned fills = unsigned(std::max<uint64_t>(1, 2 * total / kFill));
		(void)raw_files(t.dir, kFill, fills, o.slot_bytes, o.slots, true, false);
		remove_raw_files(t.dir, fills);
		for (uint64_t size : sizes) {
			// The buffers hold total bytes: a chunk size beyond that is not measured.
			if (size > total) {
				std::printf(
					"%-10s %9llu B: larger than the %llu bytes per size, not measured\n",
					t.name.c_str(), static_cast<unsigned long long>(size),
					static_cast<unsigned long long>(total));
				continue;
			}
			unsigned count = unsigned(total / size);
			// Best of reps runs per figure: the machine is shared, the best run is the least disturbed.
			Result best =
				measure(t.name, fs_of(t.dir), t.dir, o, size, count, buf, false);
			for (unsigned i = 1; i < reps && best.error.empty(); i++) {
				Result r = measure(t.name, best.fs, t.dir, o, size, count, buf,
						   i % 2 == 1);
				if (!r.error.empty()) {
					best.error = r.error;
					break;
				}
				best.copy = std::max(best.copy, r.copy);
				best.copy_back = std::max(best.copy_back, r.copy_back);
				best.file_write = std::max(best.file_write, r.file_write);
				best.file_read = std::max(best.file_read, r.file_read);
				best.evict = std::max(best.evict, r.evict);
				best.load = std::max(best.load, r.load);
				best.verified = best.verified && r.verified;
				best.max_io_in_flight =
					std::max(best.max_io_in_flight, r.max_io_in_flight);
				best.max_copies_in_flight =
					std::max(best.max_copies_in_flight, r.max_copies_in_flight);
			}
			out.push_back(best);
			std::printf("%s\n", describe(out.back()).c_str());
			std::fflush(stdout);
		}
	}
	return out;
}

// The whole run as JSON: the options, the results and the reasons anything was skipped.
inline nlohmann::json report(const std::string &bench, const kvgpu_options &o, uint64_t total,
			     unsigned reps, const std::vector<Result> &results,
			     const std::vector<std::string> &skipped)
{
	nlohmann::json j;
	j["bench"] = bench;
	j["cpus_online"] = ::sysconf(_SC_NPROCESSORS_ONLN);
	// The machine may be shared: its load when the report was written says how much.
	if (std::FILE *f = std::fopen("/proc/loadavg", "r")) {
		double l1 = 0, l5 = 0;
		if (std::fscanf(f, "%lf %lf", &l1, &l5) == 2)
			j["loadavg_1_5min"] = {l1, l5};
		std::fclose(f);
	}
	j["options"] = {{"slot_bytes", o.slot_bytes},
			{"slots", o.slots},
			{"queue_depth", o.queue_depth},
			{"checksum", o.checksum},
			{"durability", o.durability == KVGPU_DURABLE_FSYNC ? "fsync" : "none"}};
	j["bytes_per_size"] = total;
	j["repetitions"] = reps;
	j["figures"] = "best of the repetitions, GB/s = 1e9 bytes/s of payload";
	j["goal"] = "evict_gbps >= 0.90 * min(copy_gbps, file_write_gbps)";
	j["results"] = nlohmann::json::array();
	for (const Result &r : results)
		j["results"].push_back(r.to_json());
	j["skipped"] = skipped;
	return j;
}

// Targets from an environment variable "name=dir,name=dir" (a bare dir is named after itself).
inline std::vector<Target> env_targets(const char *name)
{
	std::vector<Target> out;
	const char *v = std::getenv(name);
	std::string all = v ? v : "";
	size_t pos = 0;
	while (pos < all.size()) {
		size_t end = all.find(',', pos);
		if (end == std::string::npos)
			end = all.size();
		std::string item = all.substr(pos, end - pos);
		pos = end + 1;
		if (item.empty())
			continue;
		size_t eq = item.find('=');
		if (eq == std::string::npos)
			out.push_back({item, item});
		else
			out.push_back({item.substr(0, eq), item.substr(eq + 1)});
	}
	return out;
}

// An environment variable as a number, or fallback when unset or not a number.
inline uint64_t env_u64(const char *name, uint64_t fallback)
{
	const char *v = std::getenv(name);
	if (!v || !*v)
		return fallback;
	char *end = nullptr;
	unsigned long long n = std::strtoull(v, &end, 10);
	return end && *end == '\0' && n > 0 ? n : fallback;
}

// What both benches read from the environment: payload per chunk size (KVGPU_BENCH_MIB),
// repetitions (KVGPU_BENCH_REPS), the JSON path (KVGPU_BENCH_JSON), and the engine's staging
// ring (KVGPU_BENCH_SLOT_KIB x KVGPU_BENCH_SLOTS). The chunk sizes: 256 KiB and 4 MiB are
// typical vLLM / LMCache chunks; 16 MiB + 1000 is unaligned.
struct Setup {
	uint64_t total = 0;
	unsigned reps = 0;
	std::string json_path;
	std::vector<uint64_t> sizes;
	kvgpu_options options{};
};

inline Setup env_setup(kvgpu_engine engine, uint64_t default_mib, const char *default_json)
{
	Setup s;
	s.total = env_u64("KVGPU_BENCH_MIB", default_mib) << 20;
	s.reps = unsigned(env_u64("KVGPU_BENCH_REPS", 3));
	const char *json_env = std::getenv("KVGPU_BENCH_JSON");
	s.json_path = json_env && *json_env ? json_env : default_json;
	s.sizes = {256u << 10, 4u << 20, (16u << 20) + 1000, 64u << 20};
	s.options =
		test::engine_options(engine, uint32_t(env_u64("KVGPU_BENCH_SLOT_KIB", 4096) << 10),
				     uint32_t(env_u64("KVGPU_BENCH_SLOTS", 8)));
	return s;
}

}  // namespace kvfdp::gpu::bench
