#pragma once
// docs/rules.md, built into the program: what each finding id means, why (with its reference), and what
// to do. `gpupart top` shows a finding's entry on Enter; the app links to the installed file.
#include <optional>
#include <string>
#include <string_view>

namespace gpupart {

// The whole document (generated from docs/rules.md at build time).
std::string_view rules_doc_text();

// The entry for finding `id`: the text under the heading that names it ("## overlap", or
// "### last-tpc, last-tpcs, ..."), up to the next heading, one line per paragraph without Markdown
// emphasis; nullopt for an id the document lacks.
std::optional<std::string> rules_entry(std::string_view id);

}  // namespace gpupart
