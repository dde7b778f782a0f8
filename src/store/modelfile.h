// Modelfile parser, following Ollama's parser/parser.go state machine: one instruction per
// line (FROM, PARAMETER, TEMPLATE, SYSTEM, ADAPTER, LICENSE, MESSAGE, REQUIRES, plus
// Ollama's DRAFT, RENDERER, PARSER), case-insensitive keywords, '#' comments at the start of
// a line, "..." and """...""" values that may span lines, UTF-8 (BOM allowed) or UTF-16
// with a BOM. Parameters are type-checked against Ollama's table (params.h). Every error
// carries the line and column where it was found: "(line 3, column 11): ...".
//   PADDOCK_ASSIGN(Modelfile mf, parse_modelfile(text)); mf.from[0];
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/params.h"

namespace paddock::store {

// One instruction as Ollama's parser yields it: name is "model" for FROM, the parameter
// name for PARAMETER, else the lower-cased keyword; MESSAGE args are "role: content".
struct ModelfileCommand {
  std::string name;
  std::string args;
  int line = 0, column = 0;  // where the instruction starts (1-based)
};

struct Modelfile {
  std::vector<ModelfileCommand> commands;  // in source order
  // The typed view of the commands (what create uses).
  std::vector<std::string> from;  // each FROM, in order (the first is the model)
  std::vector<std::string> adapters;
  std::optional<std::string> template_text;  // last TEMPLATE
  std::optional<std::string> system;         // last SYSTEM
  std::vector<std::string> licenses;
  std::vector<Message> messages;
  Params params;
  std::string requires_version;  // semver without the 'v'
  std::string renderer, parser, draft;
  std::vector<std::string> warnings;  // e.g. "parameter mirostat is deprecated"

  // Ollama's Modelfile.String(): each command on its own line, values quoted as needed.
  std::string to_string() const;
};

Result<Modelfile> parse_modelfile(std::string_view text);

// Ollama's quote(): values with a line break or leading/trailing space get "..." (or
// """...""" when they contain a '"'). A value containing """ and a line break cannot be
// written so that it parses back (a limit of the format).
std::string quote_modelfile_value(std::string_view s);

}  // namespace paddock::store
