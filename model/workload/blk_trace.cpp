// Block-trace parsing and replay.
#include "model/workload/blk_trace.hpp"

#include <cerrno>
#include <charconv>
#include <fstream>
#include <limits>
#include <string_view>

#include "model/workload/lifetime.hpp"
#include "model/workload/trace_file.hpp"

namespace kvfdp::workload {

namespace {

constexpr std::string_view kHeader = "t_us,op,slba,nlb,class";
constexpr std::string_view kHeaderWriter = "t_us,op,slba,nlb,class,writer";

Error line_error(const std::string &name, uint32_t line_no, const std::string &what)
{
	return guidance_error(
		std::errc::invalid_argument,
		name + ":" + std::to_string(line_no) + ": " + what +
			" (expected t_us,op,slba,nlb,class[,writer] with op W or D, class "
			"0-5 and writer a non-negative integer)");
}

template <class T> bool parse_num(std::string_view s, T &out)
{
	if (s.empty())
		return false;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return ec == std::errc() && p == s.data() + s.size();
}

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
		s.remove_suffix(1);
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	return s;
}

}  // namespace

Result<BlkRecord> parse_blk_line(const std::string &line, const std::string &name, uint32_t line_no,
				 unsigned fields)
{
	std::string_view rest = trim(line);
	std::string_view f[6];
	unsigned n = 0;
	for (;;) {
		const size_t comma = rest.find(',');
		if (n == 6)
			return line_error(name, line_no, "more than 6 fields");
		f[n++] = trim(rest.substr(0, comma));
		if (comma == std::string_view::npos)
			break;
		rest = rest.substr(comma + 1);
	}
	if (n < 5)
		return line_error(name, line_no,
				  "expected 5 or 6 comma-separated fields, found " +
					  std::to_string(n));
	if (fields && n != fields)
		return line_error(name, line_no,
				  std::to_string(n) + " fields where the header declares " +
					  std::to_string(fields));
	BlkRecord r;
	r.line = line_no;
	if (!parse_num(f[0], r.t_us))
		return line_error(name, line_no, "t_us is not a non-negative integer");
	if (f[1] == "W")
		r.write = true;
	else if (f[1] == "D")
		r.write = false;
	else
		return line_error(name, line_no, "op must be W or D");
	if (!parse_num(f[2], r.slba))
		return line_error(name, line_no, "slba is not a non-negative integer");
	if (!parse_num(f[3], r.nlb) || r.nlb == 0)
		return line_error(name, line_no, "nlb is not a positive integer");
	unsigned cls = 0;
	if (!parse_num(f[4], cls) || cls > 5)
		return line_error(name, line_no, "class must be 0-5");
	r.cls = static_cast<uint8_t>(cls);
	if (n == 6 && !parse_num(f[5], r.writer))
		return line_error(name, line_no,
				  "writer '" + std::string(f[5].substr(0, 32)) +
					  "' is not a non-negative integer");
	if (r.slba > std::numeric_limits<uint64_t>::max() - r.nlb)
		return line_error(name, line_no, "slba + nlb overflows");
	return r;
}

Result<std::vector<BlkRecord>> load_blk_trace(const std::string &path, uint64_t capacity_lbas)
{
	KVFDP_TRY(check_trace_file(path, "block trace",
				   "--blk-trace FILE.csv, as `kvfdp record` writes it"));
	std::ifstream in(path);
	if (!in)
		return errno_error(errno ? errno : ENOENT,
				   "open block trace " + path + " (pass --blk-trace FILE.csv)");
	std::vector<BlkRecord> out;
	std::string line;
	uint32_t line_no = 0;
	unsigned fields = 0;
	while (std::getline(in, line)) {
		++line_no;
		std::string_view t = trim(line);
		if (t.empty())
			continue;
		if (line_no == 1 && (t == kHeader || t == kHeaderWriter)) {
			fields = t == kHeader ? 5 : 6;
			continue;
		}
		if (line_no == 1 && !t.empty() && (t[0] < '0' || t[0] > '9'))
			return line_error(path, line_no,
					  "unknown header (want \"" + std::string(kHeader) +
						  "\" or \"" + std::string(kHeaderWriter) + "\")");
		auto r = parse_blk_line(line, path, line_no, fields);
		if (!r)
			return std::move(r).error();
		if (capacity_lbas && r->slba + r->nlb > capacity_lbas)
			return line_error(
				path, line_no,
				"LBAs " + std::to_string(r->slba) + "+" + std::to_string(r->nlb) +
					" lie beyond the capacity of " +
					std::to_string(capacity_lbas) +
					" 4 KiB LBAs; raise --capacity to the traced device's size");
		if (!out.empty() && r->t_us < out.back().t_us)
			return line_error(
				path, line_no,
				"t_us " + std::to_string(r->t_us) + " is earlier than line " +
					std::to_string(out.back().line) + "'s " +
					std::to_string(out.back().t_us) +
					": rows must be in time order (sort the trace by t_us)");
		out.push_back(*r);
	}
	if (in.bad())
		return errno_error(EIO, "read " + path);
	if (out.empty())
		return guidance_error(std::errc::invalid_argument,
				      path + ": no records (is it a `kvfdp record` CSV?)");
	return out;
}

BlkTraceWorkload::BlkTraceWorkload(std::string name, std::vector<BlkRecord> records)
    : name_(std::move(name)), records_(std::move(records))
{
}

Result<void> BlkTraceWorkload::run(sim::Placement placement, uint64_t logical_lbas,
				   uint32_t lba_size, sim::BlockSink &sink, sim::Progress *progress)
{
	if (lba_size == 0 || lba_size > kBlkTraceLbaSize || kBlkTraceLbaSize % lba_size != 0)
		return guidance_error(
			std::errc::invalid_argument,
			"the model's LBA size must divide 4096 to replay a block trace");
	const uint64_t per = kBlkTraceLbaSize / lba_size;
	const uint64_t blocks = logical_lbas / per;
	for (const auto &r : records_)
		if (r.slba + r.nlb > blocks)
			return guidance_error(
				std::errc::invalid_argument,
				name_ + ":" + std::to_string(r.line) +
					": record beyond the model's logical capacity; raise "
					"--capacity");
	std::vector<uint8_t> oracle;
	if (placement == sim::Placement::oracle) {
		// Pre-pass: each write record is a version that dies when half its blocks have
		// been overwritten or deallocated.
		constexpr uint32_t kFree = std::numeric_limits<uint32_t>::max();
		std::vector<uint32_t> owner(blocks, kFree);
		std::vector<uint32_t> dead;
		std::vector<uint32_t> version_record;  // version -> index in records_
		LifetimeRecorder rec;
		uint64_t clock = 0;
		auto kill = [&](uint64_t b) {
			uint32_t v = owner[b];
			if (v == kFree)
				return;
			owner[b] = kFree;
			if (2 * ++dead[v] >= records_[version_record[v]].nlb)
				rec.death(v, clock);
		};
		for (size_t i = 0; i < records_.size(); ++i) {
			const auto &r = records_[i];
			for (uint64_t b = r.slba; b < r.slba + r.nlb; ++b)
				kill(b);
			if (!r.write)
				continue;
			uint64_t v = rec.birth(clock, uint64_t{r.nlb} * kBlkTraceLbaSize);
			(void)v;
			version_record.push_back(static_cast<uint32_t>(i));
			dead.push_back(0);
			for (uint64_t b = r.slba; b < r.slba + r.nlb; ++b)
				owner[b] = static_cast<uint32_t>(v);
			clock += uint64_t{r.nlb} * kBlkTraceLbaSize;
		}
		std::vector<uint8_t> by_version = rec.classify();
		oracle.assign(records_.size(), 0);
		for (size_t v = 0; v < by_version.size(); ++v)
			oracle[version_record[v]] = by_version[v];
	}
	written_bytes_ = deallocated_bytes_ = 0;
	for (size_t i = 0; i < records_.size(); ++i) {
		const auto &r = records_[i];
		if (r.write) {
			uint8_t cls = placement == sim::Placement::none   ? 0
				      : placement == sim::Placement::hint ? r.cls
									  : oracle[i];
			sink.write(r.slba * per, uint64_t{r.nlb} * per, cls, r.writer);
			written_bytes_ += uint64_t{r.nlb} * kBlkTraceLbaSize;
		} else {
			sink.deallocate(r.slba * per, uint64_t{r.nlb} * per);
			deallocated_bytes_ += uint64_t{r.nlb} * kBlkTraceLbaSize;
		}
		if (progress && (i % 4096 == 0 || i + 1 == records_.size()))
			progress->update(static_cast<double>(i + 1) /
					 static_cast<double>(records_.size()));
	}
	return ok();
}

nlohmann::json BlkTraceWorkload::extra() const
{
	return {{"records", records_.size()},
		{"bytes_written", written_bytes_},
		{"bytes_deallocated", deallocated_bytes_}};
}

}  // namespace kvfdp::workload
