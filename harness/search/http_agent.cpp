#include "search/http_agent.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/file_io.h"
#include "core/sandbox.h"
#include "search/command_agent.h"

#ifdef KGATE_HAVE_CURL
#include <curl/curl.h>
#endif

namespace kgate::search {
namespace {

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at; (at = text.find(secret)) != std::string::npos;) text.replace(at, secret.size(), "***");
  return text;
}

#ifdef KGATE_HAVE_CURL
size_t collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// curl's progress callback: non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
int abort_when_stopped(void* flag, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return flag != nullptr && static_cast<const std::atomic<bool>*>(flag)->load() ? 1 : 0;
}
#endif

}  // namespace

bool http_agent_available() {
#ifdef KGATE_HAVE_CURL
  return true;
#else
  return false;
#endif
}

std::optional<std::string> first_code_block(const std::string& reply) {
  size_t open = reply.find("```");
  if (open == std::string::npos) return std::nullopt;
  size_t body = reply.find('\n', open);
  if (body == std::string::npos) return std::nullopt;
  ++body;
  size_t close = reply.find("```", body);
  if (close == std::string::npos) return std::nullopt;
  return reply.substr(body, close - body);
}

HttpAgent::HttpAgent(std::string url, std::string model, std::string api_key_env, double timeout_s)
    : url_(std::move(url)), model_(std::move(model)), api_key_env_(std::move(api_key_env)),
      timeout_s_(timeout_s) {
  if (url_.empty()) throw UsageError("agent http: `url` is required");
  core::hide_from_children(api_key_env_);  // the key stays out of every worker's environment
  while (!url_.empty() && url_.back() == '/') url_.pop_back();
}

void HttpAgent::prepare(const AgentContext& ctx) { write_agent_files(ctx); }

Proposal HttpAgent::propose(const AgentContext& ctx) {
  Proposal p;
  p.description = "http agent edit";
  std::string key;
  if (!api_key_env_.empty()) {
    const char* v = std::getenv(api_key_env_.c_str());
    if (v == nullptr || *v == '\0') {
      p.status = Proposal::Status::kFailed;
      p.error = "environment variable " + api_key_env_ + " (the API key) is not set";
      return p;
    }
    key = v;
  }
#ifndef KGATE_HAVE_CURL
  p.status = Proposal::Status::kFailed;
  p.error = "this kgate was built without libcurl: the http agent is unavailable";
  return p;
#else
  std::string candidate_path = (std::filesystem::path(ctx.workspace) / ctx.candidate).string();
  // An unreadable candidate is a failed turn, not an empty file shown to the model.
  core::ReadResult current = core::read_file(candidate_path);
  if (!current.ok()) {
    p.status = Proposal::Status::kFailed;
    p.error = candidate_path + ": cannot read the candidate: " + current.error;
    return p;
  }
  // Its reply is one file, the candidate's: a pair's partners are not offered.
  AgentContext one_file = ctx;
  one_file.partners.clear();
  std::string user = task_markdown(one_file) + "\n## Current candidate (`" + ctx.candidate + "`)\n\n```\n" +
                     current.bytes + "\n```\n\n## Last verdict\n\n```json\n" +
                     ctx.feedback.dump(2) + "\n```\n\n## History\n\n```\n" + ctx.history_tsv +
                     "```\n\nReply with the complete new candidate file in one fenced code block, "
                     "preceded by one line describing the change.\n";
  nlohmann::json body = {
      {"model", model_},
      {"messages",
       nlohmann::json::array(
           {{{"role", "system"},
             {"content", "You are a GPU kernel engineer. You edit exactly one file, the "
                         "candidate, and reply with its full new content."}},
            {{"role", "user"}, {"content", user}}})}};
  std::string payload = body.dump();
  std::string response;
  std::string endpoint = url_ + "/chat/completions";
  CURL* curl = curl_easy_init();
  if (!curl) throw InfraError("libcurl: cannot create a handle");
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  std::string auth = "Authorization: Bearer " + key;
  if (!key.empty()) headers = curl_slist_append(headers, auth.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, endpoint.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s_ * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // A stop (SIGTERM) ends the request within curl's progress interval, not at its timeout.
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, abort_when_stopped);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(ctx.interrupted));
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, ctx.interrupted != nullptr ? 0L : 1L);
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  auth.assign(auth.size(), '\0');
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    p.status = Proposal::Status::kTimeout;
    p.error = "no reply from " + endpoint + " within " + std::to_string(timeout_s_) + " s";
    return p;
  }
  if (rc != CURLE_OK) {
    p.status = Proposal::Status::kFailed;
    p.error = endpoint + ": " + curl_easy_strerror(rc);
    return p;
  }
  if (status != 200) {
    p.status = Proposal::Status::kFailed;
    p.error = endpoint + ": HTTP " + std::to_string(status) + ": " +
              redact(response.substr(0, 300), key);
    return p;
  }
  std::string content;
  try {
    auto j = nlohmann::json::parse(response);
    content = j.at("choices").at(0).at("message").at("content").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    p.status = Proposal::Status::kFailed;
    p.error = endpoint + ": not a chat-completions reply: " + e.what();
    return p;
  }
  auto code = first_code_block(content);
  if (!code) {
    p.status = Proposal::Status::kFailed;
    p.error = "the reply has no fenced code block";
    return p;
  }
  std::ofstream out(candidate_path, std::ios::binary | std::ios::trunc);
  if (!out) throw InfraError(candidate_path + ": cannot write the candidate");
  out << *code;
  // The description: the first non-empty line before the code block.
  std::stringstream ss(content.substr(0, content.find("```")));
  std::string line;
  while (std::getline(ss, line)) {
    size_t b = line.find_first_not_of(" \t#*-");
    if (b == std::string::npos) continue;
    p.description = line.substr(b, 100);
    break;
  }
  return p;
#endif
}

}  // namespace kgate::search
