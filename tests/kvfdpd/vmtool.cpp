// kvfdp-daemon-vmtool: guest-side helper of the daemon VM scenarios: a hinted file writer
// (F_SET_RW_HINT, buffered or O_DIRECT), a control-socket client, and the placement check
// (per-class bytes and RUAMW movement per handle against kvfdpd's own counters), and the chunk store
// of peer_f2fs (files of three lifetimes, their extents marked in an ftrace trace).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "bpf/tag.h"

using nlohmann::json;

namespace {

int usage()
{
	std::fprintf(
		stderr,
		"usage: kvfdp-daemon-vmtool write PATH HINT KIB [--direct] [--seed N] [--chunk KIB] [--until STOPFILE [--max-s S]]\n"
		"                                    [--overwrite] [--shuffle] [--passes N]\n"
		"       kvfdp-daemon-vmtool verify PATH SEED          (exit 0 if PATH holds write's content for SEED)\n"
		"       kvfdp-daemon-vmtool ctl SOCK JSON            (prints the reply; exit 1 if not ok)\n"
		"       kvfdp-daemon-vmtool snap SOCK CMD FILE       (saves the data of CMD's reply)\n"
		"       kvfdp-daemon-vmtool placement SOCK BEFORE_RUH BEFORE_STATUS CLASS=KIB... [--handle CLASS=H]... [--nvme-json F]\n"
		"       kvfdp-daemon-vmtool tagger-coverage SOCK   (the tagger classified every write, discard and write zeroes\n"
		"                                    kvfdpd served, less the runs the kernel skipped)\n"
		"       kvfdp-daemon-vmtool members SOCK DIR CLASS=KIB... [--handle CLASS=H]...  (a stripe, from `kvfdp ruh/stats -o json`\n"
		"                                    before and after in DIR: ruh0 ruh1 stats0 stats1 st0, nvme<M>.json)\n"
		"       kvfdp-daemon-vmtool extents DIR HANDLE FILE...  (a stripe: the files' extents, mapped to members, against\n"
		"                                    kvfdpd's bytes per member on HANDLE between DIR/ruh0.json and ruh1.json)\n"
		"       kvfdp-daemon-vmtool get FILE KEY.KEY...      (prints one value of a saved reply)\n"
		"       kvfdp-daemon-vmtool file-seen SOCK CLASS live|deleted  (exit 0 if `files` lists one with bytes)\n"
		"       kvfdp-daemon-vmtool notify-listen PATH FILE  (sd_notify receiver: one line per datagram)\n"
		"       kvfdp-daemon-vmtool chunks DIR [--hints] [--chunk-kib 256] [--rounds 32] [--short 32] [--medium 16]\n"
		"                                    [--long 16] [--long-rounds 20] [--medium-life 14] [--marker FILE]\n"
		"                                    (a chunk store of three lifetimes; JSON summary on stdout)\n"
		"       kvfdp-daemon-vmtool mark MARKER CLASS FILE...  (FIEMAP extents as \"kvfdp-ext CLASS LBA NLB\" lines)\n");
	return 2;
}

// Deterministic content: each 8-byte word is a function of seed and its file offset.
void fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t x = (off + i) * 0x9E3779B97F4A7C15ull ^ seed;
		x ^= x >> 29;
		std::memcpy(buf + i, &x, 8);
	}
}

// The chunk offsets of one pass over total bytes: in order, or with shuffle a pseudo-random
// permutation drawn from (seed, pass), a new one each pass.
void pass_order(std::vector<uint64_t> &offs, uint64_t total, size_t chunk, bool shuffle,
		uint64_t seed, uint64_t pass)
{
	offs.clear();
	for (uint64_t off = 0; off < total; off += chunk)
		offs.push_back(off);
	if (!shuffle)
		return;
	uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull ^ (pass + 1) * 0xD1B54A32D192ED03ull;
	for (size_t i = offs.size(); i > 1; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		std::swap(offs[i - 1], offs[x % i]);
	}
}

// Writes KIB of fill(seed) content. With --until STOPFILE the writer is bounded by time, not
// size: past KIB it wraps to offset 0 and rewrites the same bytes, until STOPFILE exists (or
// --max-s passes, an error), so it is certainly still writing whenever the scenario acts.
// --overwrite rewrites an existing file's bytes where they are (no O_CREAT, no O_TRUNC: on
// ext4 or XFS the same blocks, so the same LBAs); --shuffle writes each pass's chunks in a
// pseudo-random order (data that dies out of write order); --passes N writes N passes. The
// content is the same in every pass, so verify PATH SEED holds after any of them.
int cmd_write(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const char *path = argv[2];
	uint64_t hint = std::strtoull(argv[3], nullptr, 0);
	uint64_t kib = std::strtoull(argv[4], nullptr, 0);
	bool direct = false;
	uint64_t seed = 1;
	size_t chunk = 1 << 20;
	const char *until = nullptr;
	uint64_t max_s = 300;
	bool overwrite = false, shuffle = false;
	uint64_t npasses = 1;
	for (int i = 5; i < argc; i++) {
		if (!std::strcmp(argv[i], "--direct"))
			direct = true;
		else if (!std::strcmp(argv[i], "--overwrite"))
			overwrite = true;
		else if (!std::strcmp(argv[i], "--shuffle"))
			shuffle = true;
		else if (!std::strcmp(argv[i], "--passes") && i + 1 < argc)
			npasses = std::strtoull(argv[++i], nullptr, 0);
		else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = std::strtoull(argv[++i], nullptr, 0);
		else if (!std::strcmp(argv[i], "--chunk") && i + 1 < argc)
			chunk = std::strtoull(argv[++i], nullptr, 0) << 10;
		else if (!std::strcmp(argv[i], "--until") && i + 1 < argc)
			until = argv[++i];
		else if (!std::strcmp(argv[i], "--max-s") && i + 1 < argc)
			max_s = std::strtoull(argv[++i], nullptr, 0);
		else
			return usage();
	}
	if (kib == 0 || chunk == 0 || chunk % 4096 || npasses == 0 || (until && npasses != 1))
		return usage();
	const int flags = (overwrite ? 0 : O_CREAT | O_TRUNC) | (direct ? O_DIRECT : 0);
	int fd = open(path, flags | O_WRONLY, 0644);
	if (fd < 0) {
		std::fprintf(stderr, "write: open %s: %s\n", path, std::strerror(errno));
		return 1;
	}
	// 0 (NOT_SET) means "no hint": leave the inode alone.
	if (hint && fcntl(fd, KVFDP_F_SET_RW_HINT, &hint) < 0) {
		std::fprintf(stderr, "write: F_SET_RW_HINT %llu on %s: %s\n",
			     static_cast<unsigned long long>(hint), path, std::strerror(errno));
		return 1;
	}
	void *buf = nullptr;
	if (posix_memalign(&buf, 4096, chunk))
		return 1;
	const uint64_t total = kib << 10;
	const time_t t0 = time(nullptr);
	uint64_t written = 0, passes = 0;
	std::vector<uint64_t> offs;
	for (;;) {
		pass_order(offs, total, chunk, shuffle, seed, passes);
		for (const uint64_t off : offs) {
			if (until && access(until, F_OK) == 0)
				goto stopped;
			const size_t n =
				static_cast<size_t>(std::min<uint64_t>(chunk, total - off));
			fill(static_cast<uint8_t *>(buf), n, seed, off);
			ssize_t w = pwrite(fd, buf, n, static_cast<off_t>(off));
			if (w != static_cast<ssize_t>(n)) {
				std::fprintf(stderr, "write: %s at %llu: %s\n", path,
					     static_cast<unsigned long long>(off),
					     w < 0 ? std::strerror(errno) : "short write");
				return 1;
			}
			written += n;
		}
		if (++passes == npasses && !until)
			break;
		if (!until)
			continue;
		if (static_cast<uint64_t>(time(nullptr) - t0) >= max_s) {
			std::fprintf(stderr, "write: %s: %s did not appear within --max-s %llu\n",
				     path, until, static_cast<unsigned long long>(max_s));
			return 1;
		}
	}
stopped:
	if (until)
		std::printf("write: %s: %llu bytes in %llu full passes and a part, stopped by %s\n",
			    path, static_cast<unsigned long long>(written),
			    static_cast<unsigned long long>(passes), until);
	if (fsync(fd) < 0) {
		std::fprintf(stderr, "write: fsync %s: %s\n", path, std::strerror(errno));
		return 1;
	}
	close(fd);
	std::free(buf);
	return 0;
}

// Exit 0 when PATH is non-empty and every 8-byte word holds write's content for SEED.
int cmd_verify(int argc, char **argv)
{
	if (argc != 4)
		return usage();
	const uint64_t seed = std::strtoull(argv[3], nullptr, 0);
	std::FILE *f = std::fopen(argv[2], "rb");
	if (!f) {
		std::fprintf(stderr, "verify: %s: %s\n", argv[2], std::strerror(errno));
		return 1;
	}
	std::vector<uint8_t> got(1 << 20), want(1 << 20);
	uint64_t off = 0;
	size_t n;
	while ((n = std::fread(got.data(), 1, got.size(), f)) > 0) {
		fill(want.data(), n, seed, off);
		if (n % 8 || std::memcmp(got.data(), want.data(), n) != 0) {
			size_t i = 0;
			while (i + 8 <= n && std::memcmp(got.data() + i, want.data() + i, 8) == 0)
				i += 8;
			std::fprintf(stderr, "verify: %s differs from seed %llu at offset %llu\n",
				     argv[2], static_cast<unsigned long long>(seed),
				     static_cast<unsigned long long>(off + i));
			std::fclose(f);
			return 1;
		}
		off += n;
	}
	std::fclose(f);
	if (off == 0) {
		std::fprintf(stderr, "verify: %s is empty\n", argv[2]);
		return 1;
	}
	std::printf("verify: %s: %llu bytes match seed %llu\n", argv[2],
		    static_cast<unsigned long long>(off), static_cast<unsigned long long>(seed));
	return 0;
}

bool request(const std::string &sock, const std::string &line, std::string &reply)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock.c_str());
	if (fd < 0 || connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0) {
		std::fprintf(stderr, "connect %s: %s\n", sock.c_str(), std::strerror(errno));
		return false;
	}
	std::string l = line + "\n";
	if (write(fd, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
		return false;
	reply.clear();
	char c;
	while (read(fd, &c, 1) == 1 && c != '\n')
		reply += c;
	close(fd);
	return true;
}

bool get_data(const std::string &sock, const std::string &cmd, json &data)
{
	std::string reply;
	if (!request(sock, json{{"cmd", cmd}}.dump(), reply))
		return false;
	json j = json::parse(reply, nullptr, false);
	if (j.is_discarded() || !j.value("ok", false)) {
		std::fprintf(stderr, "%s: %s\n", cmd.c_str(), reply.c_str());
		return false;
	}
	data = j["data"];
	return true;
}

// The value of an unlabelled series in kvfdpd's metrics text, or -1 when it is missing.
int64_t metric_value(const json &metrics, const std::string &name)
{
	const std::string text = metrics.value("text", std::string());
	const size_t at = text.find("\n" + name + " ");
	if (at == std::string::npos)
		return -1;
	return std::strtoll(text.c_str() + at + name.size() + 2, nullptr, 10);
}

// kvfdpd's tagger counters from its metrics: requests it classified, and block requests the
// kernel issued without running it (-1 each when missing).
struct TaggerCounts {
	int64_t classified = -1, missed = -1;
	[[nodiscard]] std::string text() const
	{
		return "classified " + std::to_string(classified) + ", runs the kernel skipped " +
		       std::to_string(missed);
	}
};

bool tagger_counts(const std::string &sock, TaggerCounts &out)
{
	json m;
	if (!get_data(sock, "metrics", m))
		return false;
	out.classified = metric_value(m, "kvfdp_tagger_requests_total");
	out.missed = metric_value(m, "kvfdp_tagger_missed_runs_total");
	return true;
}

// tagger-coverage SOCK: the tagger classified every write, discard and write zeroes kvfdpd
// served, less runs the kernel skipped (both counted since the tagger and kvfdpd started
// together, as in a fresh boot).
int cmd_tagger_coverage(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	json st;
	TaggerCounts t;
	if (!get_data(argv[2], "status", st) || !tagger_counts(argv[2], t))
		return 1;
	const json &io = st["io"];
	const int64_t served = io["writes"].get<int64_t>() + io["discards"].get<int64_t>() +
			       io["write_zeroes"].get<int64_t>();
	const bool ok = t.classified > 0 && t.missed >= 0 && t.classified <= served &&
			served <= t.classified + t.missed;
	std::printf("%s: kvfdpd served %lld writes, discards and write zeroes; the tagger %s\n",
		    ok ? "ok" : "FAIL", static_cast<long long>(served), t.text().c_str());
	return ok ? 0 : 1;
}

json load(const char *path)
{
	std::ifstream in(path);
	std::stringstream ss;
	ss << in.rdbuf();
	return json::parse(ss.str(), nullptr, false);
}

// The expectations of a placement check from argv[first..]: CLASS=KIB (expect_kib), --handle
// CLASS=H (expect_handle, from the config the scenario wrote), --nvme-json F (nvme_json, when
// given a place for it). False on anything else.
bool parse_expectations(int argc, char **argv, int first,
			std::map<std::string, uint64_t> &expect_kib,
			std::map<std::string, uint64_t> &expect_handle, std::string *nvme_json)
{
	for (int i = first; i < argc; i++) {
		if (nvme_json && !std::strcmp(argv[i], "--nvme-json") && i + 1 < argc) {
			*nvme_json = argv[++i];
			continue;
		}
		if (!std::strcmp(argv[i], "--handle") && i + 1 < argc) {
			const char *m = argv[++i];
			const char *e = std::strchr(m, '=');
			if (!e)
				return false;
			expect_handle[std::string(m, static_cast<size_t>(e - m))] =
				std::strtoull(e + 1, nullptr, 0);
			continue;
		}
		const char *eq = std::strchr(argv[i], '=');
		if (!eq)
			return false;
		expect_kib[std::string(argv[i], static_cast<size_t>(eq - argv[i]))] =
			std::strtoull(eq + 1, nullptr, 0);
	}
	return true;
}

int cmd_placement(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const std::string sock = argv[2];
	json ruh0 = load(argv[3]), st0 = load(argv[4]);
	std::map<std::string, uint64_t> expect_kib, expect_handle;
	std::string nvme_json;
	if (!parse_expectations(argc, argv, 5, expect_kib, expect_handle, &nvme_json))
		return usage();
	json ruh1, st1;
	if (ruh0.is_discarded() || st0.is_discarded() || !get_data(sock, "ruh", ruh1) ||
	    !get_data(sock, "status", st1))
		return 1;
	int fails = 0;
	auto report = [&](bool ok, const std::string &what) {
		std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
		fails += !ok;
	};
	const uint64_t lba = st1["device"]["lba_size"];
	const uint64_t ru_lbas = st1["device"]["ru_size"].get<uint64_t>() / lba;
	// Class bytes: each hinted class got at least what was written with it.
	std::map<std::string, uint16_t> class_handle;
	for (size_t i = 0; i < st1["classes"].size(); i++) {
		const json &c1 = st1["classes"][i];
		const std::string name = c1["class"];
		class_handle[name] = c1["handle"];
		const uint64_t delta =
			c1["bytes"].get<uint64_t>() - st0["classes"][i]["bytes"].get<uint64_t>();
		if (expect_kib.count(name)) {
			const uint64_t want = expect_kib[name] << 10;
			// not_set also carries filesystem metadata; a hinted class carries its files only.
			const bool exact = name != "not_set";
			report(exact ? delta == want : delta >= want,
			       "class " + name + " wrote " + std::to_string(delta) + " bytes (" +
				       (exact ? "== " : ">= ") + std::to_string(want) +
				       ") on handle " + std::to_string(class_handle[name]));
		}
	}
	TaggerCounts tc;
	report(st1["stale_tags"].get<uint64_t>() == st0["stale_tags"].get<uint64_t>(),
	       "no stale tags (" + std::to_string(st1["stale_tags"].get<uint64_t>()) +
		       " in total; the tagger's counts: " +
		       (tagger_counts(sock, tc) ? tc.text() : std::string("no metrics")) + ")");
	// RUAMW: the LBAs a handle consumed equal what kvfdpd wrote to it, modulo RU rollover.
	for (size_t h = 0; h < ruh1["ruhss"].size(); h++) {
		const json &a = ruh0["ruhss"][h], &b = ruh1["ruhss"][h];
		const uint64_t wrote =
			(b["bytes"].get<uint64_t>() - a["bytes"].get<uint64_t>()) / lba;
		const uint64_t r0 = a["ruamw"], r1 = b["ruamw"];
		const uint64_t consumed = ((r0 + ru_lbas * 1024) - r1) % ru_lbas;
		report(consumed == wrote % ru_lbas,
		       "handle " + std::to_string(h) + " (pid " +
			       std::to_string(b["pid"].get<int>()) + "): kvfdpd wrote " +
			       std::to_string(wrote) + " LBAs, RUAMW " + std::to_string(r0) +
			       " -> " + std::to_string(r1) + " (consumed " +
			       std::to_string(consumed) + " mod " + std::to_string(ru_lbas) + ")");
	}
	// The map kvfdpd applied is the one the scenario's config asked for (not kvfdpd's own word).
	for (auto &[name, kib] : expect_kib) {
		if (!expect_handle.count(name)) {
			report(false,
			       "no --handle " + name +
				       "=H: the expected handle comes from the scenario's config");
			continue;
		}
		report(class_handle.count(name) && class_handle[name] == expect_handle[name],
		       "class " + name + " is on handle " + std::to_string(expect_handle[name]) +
			       " as the config says (kvfdpd: " +
			       (class_handle.count(name) ? std::to_string(class_handle[name])
							 : "none") +
			       ")");
	}
	// Hinted classes moved their configured handle by at least their bytes.
	for (auto &[name, kib] : expect_kib) {
		if (!expect_handle.count(name) || expect_handle[name] >= ruh1["ruhss"].size()) {
			report(false, "class " + name +
					      ": no configured handle within the device's " +
					      std::to_string(ruh1["ruhss"].size()));
			continue;
		}
		const size_t h = expect_handle[name];
		const uint64_t hb = ruh1["ruhss"][h]["bytes"].get<uint64_t>() -
				    ruh0["ruhss"][h]["bytes"].get<uint64_t>();
		report(hb >= (kib << 10), "handle " + std::to_string(h) + " carries class " + name);
	}
	if (!nvme_json.empty()) {
		json n = load(nvme_json.c_str());
		const json &rs = n.contains("ruhss") ? n["ruhss"] : n["ruhStatusDescriptor"];
		bool same = !n.is_discarded() && rs.is_array() && rs.size() == ruh1["ruhss"].size();
		for (size_t h = 0; same && h < rs.size(); h++)
			same = rs[h]["ruamw"].get<uint64_t>() ==
				       ruh1["ruhss"][h]["ruamw"].get<uint64_t>() &&
			       rs[h]["pid"].get<uint64_t>() ==
				       ruh1["ruhss"][h]["pid"].get<uint64_t>();
		report(same, "nvme fdp status agrees with kvfdpd's ruh (pid, ruamw per handle)");
	}
	return fails ? 1 : 0;
}

// The placement check of a stripe, per member, from the CLI's own JSON (kvfdp ruh -o json, kvfdp
// stats -o json) taken before and after the writes (DIR/ruh0.json, ruh1.json, stats0.json,
// stats1.json; kvfdpd's status before: st0.json; nvme-cli's `fdp status` of member M after:
// nvme<M>.json). Per member and handle, the drive's RUAMW moved by what kvfdpd wrote there
// (modulo RU rollover); the members add up to kvfdpd's per-handle total; each member's HBMW moved
// by what kvfdpd wrote to it; a hinted class's handle carries exactly its bytes, spread over
// every member; nvme-cli agrees with the CLI per member.
int cmd_members(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	const std::string sock = argv[2], dir = argv[3];
	std::map<std::string, uint64_t> expect_kib, expect_handle;
	if (!parse_expectations(argc, argv, 4, expect_kib, expect_handle, nullptr))
		return usage();
	json r0 = load((dir + "/ruh0.json").c_str()), r1 = load((dir + "/ruh1.json").c_str());
	json s0 = load((dir + "/stats0.json").c_str()), s1 = load((dir + "/stats1.json").c_str());
	json st0 = load((dir + "/st0.json").c_str()), st1;
	if (r0.is_discarded() || r1.is_discarded() || s0.is_discarded() || s1.is_discarded() ||
	    st0.is_discarded() || !get_data(sock, "status", st1)) {
		std::printf("FAIL: a snapshot in %s is missing or not JSON\n", dir.c_str());
		return 1;
	}
	int fails = 0;
	auto report = [&](bool ok, const std::string &what) {
		std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
		fails += !ok;
	};
	const uint64_t lba = st1["device"]["lba_size"];
	const uint64_t ru_lbas = st1["device"]["ru_size"].get<uint64_t>() / lba;
	const size_t n = r1.value("members", json::array()).size();
	report(n >= 2 && n == st1["device"]["stripe"]["members"].get<size_t>(),
	       "kvfdp ruh shows " + std::to_string(n) + " members, as status says");
	report(s1.value("members", json::array()).size() == n, "kvfdp stats shows every member");
	auto bw = [](const json &row) {
		return row["bytes_written"].is_null() ? uint64_t{0}
						      : row["bytes_written"].get<uint64_t>();
	};
	const size_t nh = r1["ruhss"].size();
	std::vector<uint64_t> sum(nh, 0);
	for (size_t m = 0; m < n; m++) {
		const json &a = r0["members"][m], &b = r1["members"][m];
		const std::string who =
			"member " + std::to_string(m) + " (" + b["device"].get<std::string>() + ")";
		uint64_t member_bytes = 0;
		for (size_t h = 0; h < nh && h < b["ruhss"].size(); h++) {
			const uint64_t wrote = bw(b["ruhss"][h]) - bw(a["ruhss"][h]);
			sum[h] += wrote;
			member_bytes += wrote;
			const uint64_t x0 = a["ruhss"][h]["ruamw"], x1 = b["ruhss"][h]["ruamw"];
			const uint64_t consumed = ((x0 + ru_lbas * 1024) - x1) % ru_lbas;
			report(consumed == (wrote / lba) % ru_lbas,
			       who + " handle " + std::to_string(h) + " (pid " +
				       std::to_string(b["ruhss"][h]["pid"].get<int>()) +
				       "): kvfdpd wrote " + std::to_string(wrote / lba) +
				       " LBAs there, its RUAMW " + std::to_string(x0) + " -> " +
				       std::to_string(x1) + " (consumed " +
				       std::to_string(consumed) + " mod " +
				       std::to_string(ru_lbas) + ")");
		}
		const uint64_t h0 = s0["members"][m]["hbmw"], h1 = s1["members"][m]["hbmw"];
		report(h1 - h0 == member_bytes,
		       who + ": the drive's HBMW moved by " + std::to_string(h1 - h0) +
			       " bytes, kvfdpd wrote " + std::to_string(member_bytes) + " there");
		report(s1["members"][m]["lifetime"].contains("waf"),
		       who + ": stats gives its WAF (or why not)");
		json nv = load((dir + "/nvme" + std::to_string(m) + ".json").c_str());
		const json &rs =
			!nv.is_discarded() && nv.contains("ruhss") ? nv["ruhss"] : json::array();
		bool same = rs.size() == b["ruhss"].size();
		for (size_t h = 0; same && h < rs.size(); h++)
			same = rs[h]["ruamw"].get<uint64_t>() ==
				       b["ruhss"][h]["ruamw"].get<uint64_t>() &&
			       rs[h]["pid"].get<uint64_t>() == b["ruhss"][h]["pid"].get<uint64_t>();
		report(same,
		       who + ": nvme fdp status agrees with kvfdp ruh (pid, ruamw per handle)");
	}
	for (size_t h = 0; h < nh; h++)
		report(sum[h] == bw(r1["ruhss"][h]) - bw(r0["ruhss"][h]),
		       "handle " + std::to_string(h) +
			       ": the members' bytes add up to kvfdpd's total (" +
			       std::to_string(sum[h]) + ")");
	std::map<std::string, uint64_t> class_handle, class_delta;
	for (size_t i = 0; i < st1["classes"].size(); i++) {
		const std::string name = st1["classes"][i]["class"];
		class_handle[name] = st1["classes"][i]["handle"];
		class_delta[name] = st1["classes"][i]["bytes"].get<uint64_t>() -
				    st0["classes"][i]["bytes"].get<uint64_t>();
	}
	for (auto &[name, kib] : expect_kib) {
		const uint64_t want = kib << 10;
		const bool exact =
			name != "not_set";  // not_set also carries the filesystem's metadata
		report(exact ? class_delta[name] == want : class_delta[name] >= want,
		       "class " + name + " wrote " + std::to_string(class_delta[name]) +
			       (exact ? " == " : " >= ") + std::to_string(want));
		if (!expect_handle.count(name) || expect_handle[name] >= nh) {
			report(false, "class " + name + ": no --handle within the stripe's " +
					      std::to_string(nh) + " handles");
			continue;
		}
		const size_t h = expect_handle[name];
		report(class_handle[name] == h, "class " + name + " is on handle " +
							std::to_string(h) + " as the config says");
		if (!exact)
			continue;
		report(sum[h] == want, "handle " + std::to_string(h) + " carries exactly class " +
					       name + "'s bytes over the members (" +
					       std::to_string(sum[h]) + ")");
		for (size_t m = 0; m < n; m++) {
			const uint64_t got =
				bw(r1["members"][m]["ruhss"][h]) - bw(r0["members"][m]["ruhss"][h]);
			report(got > 0, "class " + name + " reached member " + std::to_string(m) +
						" (" + std::to_string(got) + " bytes on handle " +
						std::to_string(h) + ")");
		}
	}
	return fails ? 1 : 0;
}

// Where a stripe put files, independently of kvfdpd's counters: each file's written extents
// on the ublk disk (FIEMAP, physical offsets), mapped through the stripe layout (unit u =
// LBA / unit LBAs on member u mod N, docs/nvme.md "Striping"), summed per member; those sums
// must equal the bytes kvfdpd counted per member on HANDLE between the two `kvfdp ruh -o json`
// snapshots in DIR (the files are the only data written on HANDLE then).
int cmd_extents(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const std::string dir = argv[2];
	const size_t handle = std::strtoull(argv[3], nullptr, 0);
	json r0 = load((dir + "/ruh0.json").c_str()), r1 = load((dir + "/ruh1.json").c_str());
	json st = load((dir + "/st0.json").c_str());
	if (r0.is_discarded() || r1.is_discarded() || st.is_discarded() ||
	    !st["device"].contains("stripe"))
		return std::printf("FAIL: %s lacks the ruh0/ruh1/st0 snapshots of a stripe\n",
				   dir.c_str()),
		       1;
	const uint64_t unit = st["device"]["stripe"]["stripe_bytes"];
	const size_t n = st["device"]["stripe"]["members"];
	std::vector<uint64_t> expect(n, 0);
	for (int i = 4; i < argc; i++) {
		const int fd = ::open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return std::printf("FAIL: open %s: %s\n", argv[i], std::strerror(errno)), 1;
		constexpr unsigned kMax = 512;
		std::vector<uint8_t> mem(sizeof(fiemap) + kMax * sizeof(fiemap_extent));
		auto *fm = reinterpret_cast<fiemap *>(mem.data());
		fm->fm_start = 0;
		fm->fm_length = ~0ull;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = kMax;
		if (::ioctl(fd, FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == kMax) {
			::close(fd);
			return std::printf("FAIL: FIEMAP of %s (%u extents)\n", argv[i],
					   fm->fm_mapped_extents),
			       1;
		}
		struct stat sb {};
		::fstat(fd, &sb);
		::close(fd);
		for (unsigned e = 0; e < fm->fm_mapped_extents; e++) {
			const fiemap_extent &x = fm->fm_extents[e];
			if (x.fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC |
					  FIEMAP_EXTENT_UNKNOWN))
				continue;
			// Only the part below the file's size holds its data (the rest was never written).
			const uint64_t len = std::min<uint64_t>(
				x.fe_length, static_cast<uint64_t>(sb.st_size) > x.fe_logical
						     ? ((static_cast<uint64_t>(sb.st_size) -
							 x.fe_logical + 4095) &
							~4095ull)
						     : 0);
			for (uint64_t at = x.fe_physical, end = x.fe_physical + len; at < end;) {
				const uint64_t u = at / unit, upto = std::min(end, (u + 1) * unit);
				expect[u % n] += upto - at;
				at = upto;
			}
		}
	}
	int fails = 0;
	for (size_t m = 0; m < n; m++) {
		const uint64_t got =
			r1["members"][m]["ruhss"][handle]["bytes_written"].get<uint64_t>() -
			r0["members"][m]["ruhss"][handle]["bytes_written"].get<uint64_t>();
		const bool ok = got == expect[m];
		std::printf(
			"%s: member %zu handle %zu: the files' extents put %llu bytes there, kvfdpd wrote %llu\n",
			ok ? "ok" : "FAIL", m, handle, static_cast<unsigned long long>(expect[m]),
			static_cast<unsigned long long>(got));
		fails += !ok;
	}
	return fails ? 1 : 0;
}

int cmd_get(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	json j = load(argv[2]);
	for (int i = 3; i < argc && !j.is_discarded(); i++) {
		std::string key = argv[i];
		if (j.is_array())
			j = j[std::strtoul(key.c_str(), nullptr, 10)];
		else if (j.contains(key))
			j = j[key];
		else
			return 1;
	}
	std::printf("%s\n", j.is_string() ? j.get<std::string>().c_str() : j.dump().c_str());
	return 0;
}

// Exit 0 when the `files` reply lists a file of cls in state (live: no death; deleted: a
// death and a positive lifetime) with bytes > 0; prints the matching row.
int cmd_file_seen(int argc, char **argv)
{
	if (argc != 5)
		return usage();
	json d;
	if (!get_data(argv[2], "files", d))
		return 1;
	if (!d.value("available", false)) {
		std::fprintf(stderr, "files: not available: %s\n", d.dump().c_str());
		return 1;
	}
	const bool want_live = std::strcmp(argv[4], "live") == 0;
	for (const json &f : d.value("files", json::array())) {
		if (f.value("class", std::string()) != argv[3] || !f["bytes"].is_number() ||
		    f["bytes"].get<uint64_t>() == 0)
			continue;
		const bool live = f["death"].is_null();
		if (live != want_live)
			continue;
		if (!live && !(f["lifetime_s"].is_number() && f["lifetime_s"].get<double>() > 0))
			continue;
		std::printf("%s\n", f.dump().c_str());
		return 0;
	}
	std::fprintf(stderr, "files: no %s %s file with bytes among %zu\n", argv[4], argv[3],
		     d.value("files", json::array()).size());
	return 1;
}

// Binds a datagram socket at PATH (as a service manager does for NOTIFY_SOCKET), creates
// FILE, then appends each datagram to it as one line (newlines become spaces) until killed.
int cmd_notify_listen(int argc, char **argv)
{
	if (argc != 4)
		return usage();
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[2]);
	unlink(argv[2]);
	if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0) {
		std::fprintf(stderr, "notify-listen: bind %s: %s\n", argv[2], std::strerror(errno));
		return 1;
	}
	FILE *out = std::fopen(argv[3], "a");
	if (!out)
		return 1;
	std::fflush(out);
	char buf[4096];
	for (;;) {
		const ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		std::string m(buf, static_cast<size_t>(n));
		for (char &c : m)
			if (c == '\n')
				c = ' ';
		std::fprintf(out, "%s\n", m.c_str());
		std::fflush(out);
	}
}

// --- the chunk store of peer_f2fs: three lifetimes, and where each file's blocks lie ---

// Writes one "kvfdp-ext CLASS LBA NLB" line (4096-byte blocks) per extent of fd's file to
// marker (ftrace's trace_marker: each write() is one event, in order with the block and NVMe
// events of the same trace), so the host can tell which lifetime class each device write
// carried. Returns false if FIEMAP fails.
bool mark_extents(int marker, int fd, unsigned cls, uint64_t &markers)
{
	constexpr unsigned kMax = 256;
	std::vector<uint8_t> mem(sizeof(fiemap) + kMax * sizeof(fiemap_extent));
	uint64_t start = 0;
	for (;;) {
		std::fill(mem.begin(), mem.end(), 0);
		auto *fm = reinterpret_cast<fiemap *>(mem.data());
		fm->fm_start = start;
		fm->fm_length = ~0ull - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = kMax;
		if (::ioctl(fd, FS_IOC_FIEMAP, fm) != 0)
			return false;
		bool last = fm->fm_mapped_extents == 0;
		for (unsigned e = 0; e < fm->fm_mapped_extents; e++) {
			const fiemap_extent &x = fm->fm_extents[e];
			last = last || (x.fe_flags & FIEMAP_EXTENT_LAST);
			start = x.fe_logical + x.fe_length;
			if (x.fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
					  FIEMAP_EXTENT_NOT_ALIGNED))
				continue;
			if (marker >= 0) {
				char line[96];
				const int n = std::snprintf(
					line, sizeof(line), "kvfdp-ext %u %llu %llu\n", cls,
					static_cast<unsigned long long>(x.fe_physical >> 12),
					static_cast<unsigned long long>((x.fe_length + 4095) >>
									12));
				if (::write(marker, line, static_cast<size_t>(n)) != n)
					return false;
			}
			markers++;
		}
		if (last || fm->fm_mapped_extents < kMax)
			return true;
	}
}

int cmd_mark(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const int marker = ::open(argv[2], O_WRONLY | O_CLOEXEC);
	if (marker < 0)
		return std::fprintf(stderr, "mark: open %s: %s\n", argv[2], std::strerror(errno)),
		       1;
	const unsigned cls = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 0));
	uint64_t markers = 0;
	for (int i = 4; i < argc; i++) {
		const int fd = ::open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || !mark_extents(marker, fd, cls, markers))
			return std::fprintf(stderr, "mark: FIEMAP %s: %s\n", argv[i],
					    std::strerror(errno)),
			       1;
		::close(fd);
	}
	::close(marker);
	std::printf("mark: %llu extents\n", static_cast<unsigned long long>(markers));
	return 0;
}

// A chunk store of three lifetimes in one process (cheap under TCG). Each round writes
// --short SHORT, --medium MEDIUM and (for the first --long-rounds rounds) --long EXTREME chunk
// files of --chunk-kib, interleaved file by file in proportion, each buffered, fsync'ed, then
// marked (its extents, with its class). At the end of round r it deletes the SHORT files of
// round r-1 and the MEDIUM files of round r - --medium-life, oldest first, each marked again
// just before the unlink (so blocks the filesystem moved meanwhile are attributed too); the
// EXTREME files stay. After the last round every live file is marked once more. The class is
// the file's lifetime whatever --hints says; --hints also sets it with F_SET_RW_HINT.
int cmd_chunks(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const std::string dir = argv[2];
	bool hints = false;
	uint64_t chunk_kib = 256, rounds = 32, n_short = 32, n_medium = 16, n_long = 16,
		 long_rounds = 20, medium_life = 14;
	const char *marker_path = nullptr;
	for (int i = 3; i < argc; i++) {
		auto num = [&](uint64_t &v) {
			if (i + 1 >= argc)
				return false;
			v = std::strtoull(argv[++i], nullptr, 0);
			return true;
		};
		bool ok = true;
		if (!std::strcmp(argv[i], "--hints"))
			hints = true;
		else if (!std::strcmp(argv[i], "--chunk-kib"))
			ok = num(chunk_kib);
		else if (!std::strcmp(argv[i], "--rounds"))
			ok = num(rounds);
		else if (!std::strcmp(argv[i], "--short"))
			ok = num(n_short);
		else if (!std::strcmp(argv[i], "--medium"))
			ok = num(n_medium);
		else if (!std::strcmp(argv[i], "--long"))
			ok = num(n_long);
		else if (!std::strcmp(argv[i], "--long-rounds"))
			ok = num(long_rounds);
		else if (!std::strcmp(argv[i], "--medium-life"))
			ok = num(medium_life);
		else if (!std::strcmp(argv[i], "--marker") && i + 1 < argc)
			marker_path = argv[++i];
		else
			ok = false;
		if (!ok)
			return usage();
	}
	if (chunk_kib == 0 || chunk_kib % 4 || medium_life == 0)
		return usage();
	const int marker = marker_path ? ::open(marker_path, O_WRONLY | O_CLOEXEC) : -1;
	if (marker_path && marker < 0)
		return std::fprintf(stderr, "chunks: open %s: %s\n", marker_path,
				    std::strerror(errno)),
		       1;
	constexpr unsigned kShort = 2, kMedium = 3, kExtreme = 5;  // RWH_WRITE_LIFE_*
	struct File {
		std::string path;
		unsigned cls;
		uint64_t round;
	};
	const size_t bytes = chunk_kib << 10;
	void *buf = nullptr;
	if (posix_memalign(&buf, 4096, bytes))
		return 1;
	std::map<unsigned, uint64_t> written, deleted, files;
	uint64_t markers = 0, seq = 0;
	std::vector<File> live;
	timespec t0{}, t1{};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	auto fail = [&](const char *what, const std::string &path) {
		std::fprintf(stderr, "chunks: %s %s: %s (after %llu files)\n", what, path.c_str(),
			     std::strerror(errno), static_cast<unsigned long long>(seq));
		return 1;
	};
	for (uint64_t r = 0; r < rounds; r++) {
		// this round's files, interleaved in proportion: file i of a class of n sits at (i + 0.5) / n
		std::vector<std::pair<double, unsigned>> order;
		const std::pair<unsigned, uint64_t> counts[] = {
			{kShort, n_short},
			{kMedium, n_medium},
			{kExtreme, r < long_rounds ? n_long : 0}};
		for (auto [cls, n] : counts)
			for (uint64_t i = 0; i < n; i++)
				order.emplace_back((static_cast<double>(i) + 0.5) /
							   static_cast<double>(n),
						   cls);
		std::stable_sort(order.begin(), order.end(),
				 [](const auto &a, const auto &b) { return a.first < b.first; });
		for (auto [pos, cls] : order) {
			(void)pos;
			File f{dir + "/c" + std::to_string(cls) + "-" + std::to_string(seq), cls,
			       r};
			fill(static_cast<uint8_t *>(buf), bytes, ++seq, 0);
			const int fd = ::open(f.path.c_str(),
					      O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
			if (fd < 0)
				return fail("open", f.path);
			uint64_t h = cls;
			if (hints && fcntl(fd, KVFDP_F_SET_RW_HINT, &h) < 0)
				return fail("F_SET_RW_HINT", f.path);
			if (pwrite(fd, buf, bytes, 0) != static_cast<ssize_t>(bytes))
				return fail("write", f.path);
			if (fsync(fd) < 0)
				return fail("fsync", f.path);
			if (!mark_extents(marker, fd, cls, markers))
				return fail("FIEMAP", f.path);
			::close(fd);
			written[cls] += bytes;
			files[cls]++;
			live.push_back(std::move(f));
		}
		// deaths, in lifetime order: last round's SHORT files, then the MEDIUM files of medium_life rounds ago
		std::vector<File> keep;
		for (File &f : live) {
			const bool dies = (f.cls == kShort && f.round + 1 <= r) ||
					  (f.cls == kMedium && f.round + medium_life <= r);
			if (!dies) {
				keep.push_back(std::move(f));
				continue;
			}
			const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
			if (fd < 0 || !mark_extents(marker, fd, f.cls, markers))
				return fail("FIEMAP before unlink", f.path);
			::close(fd);
			if (::unlink(f.path.c_str()) < 0)
				return fail("unlink", f.path);
			deleted[f.cls] += bytes;
		}
		live = std::move(keep);
	}
	std::map<unsigned, uint64_t> live_bytes;
	for (const File &f : live) {
		const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
		if (fd < 0 || !mark_extents(marker, fd, f.cls, markers))
			return fail("FIEMAP at the end", f.path);
		::close(fd);
		live_bytes[f.cls] += bytes;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	std::free(buf);
	if (marker >= 0)
		::close(marker);
	auto by_class = [](const std::map<unsigned, uint64_t> &m) {
		json j = json::object();
		for (auto [c, v] : m)
			j[c == kShort ? "short" : c == kMedium ? "medium" : "extreme"] = v;
		return j;
	};
	uint64_t total = 0;
	for (auto [c, v] : written)
		total += v;
	json out = {{"hints", hints},
		    {"chunk_bytes", bytes},
		    {"rounds", rounds},
		    {"files", by_class(files)},
		    {"bytes_written", by_class(written)},
		    {"bytes_deleted", by_class(deleted)},
		    {"bytes_live", by_class(live_bytes)},
		    {"app_bytes", total},
		    {"markers", markers},
		    {"seconds",
		     static_cast<double>(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9}};
	std::printf("%s\n", out.dump().c_str());
	return 0;
}

int cmd_ctl(int argc, char **argv)
{
	if (argc != 4)
		return usage();
	std::string reply;
	if (!request(argv[2], argv[3], reply))
		return 1;
	std::printf("%s\n", reply.c_str());
	json j = json::parse(reply, nullptr, false);
	return !j.is_discarded() && j.value("ok", false) ? 0 : 1;
}

int cmd_snap(int argc, char **argv)
{
	if (argc != 5)
		return usage();
	json d;
	if (!get_data(argv[2], argv[3], d))
		return 1;
	std::ofstream(argv[4]) << d.dump() << "\n";
	return 0;
}
}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	static const std::pair<std::string_view, int (*)(int, char **)> kCommands[] = {
		{"write", cmd_write},
		{"verify", cmd_verify},
		{"ctl", cmd_ctl},
		{"snap", cmd_snap},
		{"placement", cmd_placement},
		{"tagger-coverage", cmd_tagger_coverage},
		{"get", cmd_get},
		{"members", cmd_members},
		{"extents", cmd_extents},
		{"file-seen", cmd_file_seen},
		{"notify-listen", cmd_notify_listen},
		{"chunks", cmd_chunks},
		{"mark", cmd_mark},
	};
	for (const auto &[name, run] : kCommands)
		if (argv[1] == name)
			return run(argc, argv);
	return usage();
}
