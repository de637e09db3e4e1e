// Control protocol parsing and framing.
#include "kvfdpd/daemon/ctl/control_proto.hpp"

#include <algorithm>

#include "proto/control.hpp"

namespace kvfdp::daemon {

bool parse_request(std::string_view line, Request &out, std::string &error)
{
	if (line.size() > kMaxRequestLine) {
		error = "request line exceeds " + std::to_string(kMaxRequestLine) + " bytes";
		return false;
	}
	nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
	if (j.is_discarded()) {
		error = "malformed request: not JSON; send one object per line, e.g. {\"cmd\":\"status\"}";
		return false;
	}
	if (!j.is_object()) {
		error = "malformed request: not a JSON object; send e.g. {\"cmd\":\"status\"}";
		return false;
	}
	auto it = j.find(proto::kCmdKey);
	if (it == j.end() || !it->is_string()) {
		error = "request needs a string \"cmd\", e.g. {\"cmd\":\"status\"}";
		return false;
	}
	out.cmd = it->get_ref<const std::string &>();
	out.args = std::move(j);
	return true;
}

bool is_admin(uint32_t uid, uint32_t gid, const std::vector<uint32_t> &groups,
	      std::optional<uint32_t> admin_gid)
{
	if (uid == 0)
		return true;
	if (!admin_gid)
		return false;
	return gid == *admin_gid ||
	       std::find(groups.begin(), groups.end(), *admin_gid) != groups.end();
}

std::string access_refusal(std::string_view cmd, const Peer &peer)
{
	if (peer.admin || !proto::changes_state(cmd))
		return "";
	const std::string g = proto::kAdminGroup;
	return std::string(cmd) + " needs root or membership of group " + g + " (usermod -aG " + g +
	       " USER, then log in again); nothing was changed";
}

std::string reply_ok(const nlohmann::json &data)
{
	// "ok" first, as docs/control.md shows; replace: invalid UTF-8 (paths) must not throw.
	return std::string("{\"") + proto::kOkKey + "\":true,\"" + proto::kDataKey +
	       "\":" + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "}\n";
}

std::string reply_error(std::string_view message)
{
	std::string m(message);
	for (char &c : m)
		if (c == '\n' || c == '\r')
			c = ' ';
	return std::string("{\"") + proto::kOkKey + "\":false,\"" + proto::kErrorKey + "\":" +
	       nlohmann::json(m).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
	       "}\n";
}

bool get_positive_arg(const Request &req, const char *key, uint64_t &value, std::string &error)
{
	auto it = req.args.find(key);
	if (it == req.args.end())
		return true;
	if (!it->is_number_unsigned() || it->get<uint64_t>() == 0) {
		error = req.cmd + "." + key + " must be a positive integer";
		return false;
	}
	value = it->get<uint64_t>();
	return true;
}

bool LineBuffer::append(std::string_view bytes)
{
	if (pos_ > 0 && pos_ == buf_.size()) {
		buf_.clear();
		pos_ = 0;
		scanned_ = 0;
	} else if (pos_ > kMaxRequestLine) {
		buf_.erase(0, pos_);
		pos_ = 0;
	}
	buf_.append(bytes);
	// Over the limit only if no '\n' within the first limit+1 pending bytes.
	const size_t pend = buf_.size() - pos_;
	if (pend <= kMaxRequestLine)
		return true;
	const size_t nl = buf_.find('\n', pos_);
	return nl != std::string::npos && nl - pos_ <= kMaxRequestLine;
}

bool LineBuffer::next_line(std::string &line)
{
	const size_t from = pos_ + scanned_;
	const size_t nl = buf_.find('\n', from);
	if (nl == std::string::npos) {
		scanned_ = buf_.size() - pos_;
		return false;
	}
	// A line over the limit is never returned: it stays pending (pending() > kMaxRequestLine),
	// and the server answers it with an error and closes, as append's false says.
	if (nl - pos_ > kMaxRequestLine) {
		scanned_ = 0;
		return false;
	}
	size_t end = nl;
	if (end > pos_ && buf_[end - 1] == '\r')
		end--;
	line.assign(buf_, pos_, end - pos_);
	pos_ = nl + 1;
	scanned_ = 0;
	return true;
}

}  // namespace kvfdp::daemon
