#include "contract/sse.h"

namespace leasehold::contract {

std::string EventFrame(std::string_view json) {
  std::string frame = "event: ";
  frame += kLeaderEvent;
  frame += "\ndata: ";
  frame.append(json.data(), json.size());
  frame += "\n\n";
  return frame;
}

Result<std::vector<SseParser::Event>> SseParser::Feed(std::string_view bytes) {
  std::vector<Event> out;
  for (char c : bytes) {
    if (c != '\n') {
      if (line_.size() >= kMaxLine) {
        return Status(Code::kMalformed, "a watch stream line is longer than 64 KiB");
      }
      line_ += c;
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.empty()) {
      if (has_data_) out.push_back(Event{type_.empty() ? "message" : type_, data_});
      type_.clear();
      data_.clear();
      has_data_ = false;
    } else if (line_[0] != ':') {
      const size_t colon = line_.find(':');
      std::string field = line_.substr(0, colon);
      std::string value = colon == std::string::npos ? "" : line_.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
      if (field == "event") {
        type_ = value;
      } else if (field == "data") {
        if (has_data_) data_ += '\n';
        data_ += value;
        has_data_ = true;
      }
    }
    line_.clear();
  }
  return out;
}

}  // namespace leasehold::contract
