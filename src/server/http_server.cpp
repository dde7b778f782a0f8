#include "server/http_server.h"

#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "base/log.h"

namespace paddock::server {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop.store(true); }

HttpRequest to_request(const httplib::Request& req, const httplib::ContentReader* reader) {
  HttpRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.headers) r.headers.emplace(k, v);
  if (reader) {
    r.body_reader = [reader](const std::function<bool(const char*, size_t)>& sink) -> Status {
      if (!(*reader)([&](const char* data, size_t n) { return sink(data, n); })) {
        return io_error("reading the request body failed");
      }
      return Status::ok();
    };
  } else {
    r.body = req.body;
  }
  return r;
}

void apply(const HttpResponse& in, httplib::Response& out) {
  out.status = in.status;
  for (const auto& [k, v] : in.headers) out.set_header(k, v);
  if (in.stream) {
    auto stream = in.stream;
    out.set_chunked_content_provider(in.content_type, [stream](size_t, httplib::DataSink& sink) {
      stream([&](std::string_view s) { return sink.write(s.data(), s.size()); });
      sink.done();
      return true;
    });
  } else {
    out.set_content(in.body, in.content_type);
  }
}

}  // namespace

Status serve(Api& api, const HostPort& where) {
  httplib::Server http;
  http.new_task_queue = [] { return new httplib::ThreadPool(64); };
  http.set_payload_max_length(std::numeric_limits<size_t>::max());  // JSON bodies are limited by Api
  http.set_read_timeout(std::chrono::minutes(10));
  http.set_write_timeout(std::chrono::minutes(10));
  // Api::handle answers its handlers' exceptions itself; anything thrown around it (an
  // allocation failure) must not reach the client as httplib's EXCEPTION_WHAT header.
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    log_error("unhandled exception on " + req.method + " " + req.path);
    res.status = 500;
    res.set_content("{\"error\":\"internal server error\"}", "application/json; charset=utf-8");
  });

  auto dispatch = [&api](const httplib::Request& req, httplib::Response& res,
                         const httplib::ContentReader* reader) {
    const auto t0 = std::chrono::steady_clock::now();
    HttpRequest r = to_request(req, reader);
    HttpResponse out = api.handle(r);
    apply(out, res);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    char line[512];
    std::snprintf(line, sizeof(line), "[GIN] | %3d | %12.3fms | %15s | %-7s %s", out.status, ms,
                  req.remote_addr.c_str(), req.method.c_str(), req.path.c_str());
    log_info(line);
  };
  auto plain = [dispatch](const httplib::Request& req, httplib::Response& res) {
    dispatch(req, res, nullptr);
  };
  auto blob = [dispatch, plain, max_body = api.max_body_bytes()](
                  const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    if (req.path.rfind("/api/blobs/", 0) == 0) {
      dispatch(req, res, &reader);
      return;
    }
    // Other bodies are read whole, up to the Api's limit.
    std::string body;
    const bool ok = reader([&](const char* data, size_t n) {
      body.append(data, n);
      return body.size() <= max_body;
    });
    if (!ok) {
      res.status = 413;
      res.set_content("{\"error\":\"request body too large\"}", "application/json; charset=utf-8");
      log_info("[GIN] | 413 | " + req.method + " " + req.path);
      return;
    }
    httplib::Request copy = req;
    copy.body = std::move(body);
    plain(copy, res);
  };
  const std::string any = ".*";
  http.Get(any, plain);
  http.Delete(any, blob);
  http.Options(any, plain);
  http.Post(any, blob);
  http.Put(any, blob);
  http.Patch(any, blob);
  // HEAD is answered by the GET handlers in httplib; give it the Api explicitly instead.
  http.set_pre_routing_handler([dispatch](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    dispatch(req, res, nullptr);
    return httplib::Server::HandlerResponse::Handled;
  });

  if (!http.bind_to_port(where.host, where.port)) {
    return error(Code::kUnavailable,
                 "listen tcp " + where.to_string() + ": bind: address already in use or not available");
  }
  g_stop.store(false);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::thread watcher([&http] {
    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    log_info("shutting down");
    http.stop();
  });
  log_info("Listening on " + where.to_string() + " (version paddock)");
  http.listen_after_bind();
  g_stop.store(true);
  watcher.join();
  return Status::ok();
}

}  // namespace paddock::server
