#include "server/sse.h"

namespace paddock::server {

std::string sse_event(const Json& data, const std::string& event) {
  std::string out = event.empty() ? "" : "event: " + event + "\n";
  return out + "data: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

HttpResponse sse_relay(HttpResponse native, SseRelay relay) {
  HttpResponse r;
  r.content_type = "text/event-stream";
  r.headers = std::move(native.headers);  // X-Paddock-Truncated, decided before the stream starts
  r.stream = [native_stream = std::move(native.stream), relay = std::move(relay)](const WriteFn& write) {
    bool open = !relay.begin || relay.begin(write);
    std::string pending;
    if (open) {
      native_stream([&](std::string_view bytes) {
        pending.append(bytes);
        size_t nl;
        while (open && (nl = pending.find('\n')) != std::string::npos) {
          const Json line = Json::parse(pending.substr(0, nl), nullptr, false);
          pending.erase(0, nl + 1);
          if (!line.is_discarded()) open = relay.line(line, write);
        }
        return open;
      });
    }
    if (open && relay.end) relay.end(write);
  };
  return r;
}

}  // namespace paddock::server
