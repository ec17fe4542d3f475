#include "controller/rules_doc.hpp"

#include <sstream>
#include <vector>

namespace gpupart {
namespace {

// The ids a heading line names ("### undo-process-gone, undo-changed-since" names two); none for a line
// that is not a heading.
std::vector<std::string> heading_ids(const std::string& line) {
    std::vector<std::string> ids;
    if (!line.starts_with("## ") && !line.starts_with("### ")) return ids;
    std::istringstream names(line.substr(line.find(' ') + 1));
    std::string name;
    while (std::getline(names, name, ',')) {
        const auto first = name.find_first_not_of(' ');
        const auto last = name.find_last_not_of(' ');
        if (first != std::string::npos) ids.push_back(name.substr(first, last - first + 1));
    }
    return ids;
}

}  // namespace

std::optional<std::string> rules_entry(std::string_view id) {
    std::istringstream doc{std::string(rules_doc_text())};
    std::string line;
    std::optional<std::string> entry;
    while (std::getline(doc, line)) {
        const bool heading = line.starts_with("#");
        if (entry) {
            if (heading) break;
            // One line per paragraph (the file is hard-wrapped), without the Markdown emphasis markers,
            // so a terminal can wrap it to its own width.
            for (std::size_t at; (at = line.find("**")) != std::string::npos;) line.erase(at, 2);
            if (line.empty())
                *entry += "\n";
            else
                *entry += (entry->empty() || entry->back() == '\n' ? "" : " ") + line;
            continue;
        }
        for (const std::string& named : heading_ids(line))
            if (named == id) entry = "";
    }
    if (!entry) return std::nullopt;
    while (!entry->empty() && entry->back() == '\n') entry->pop_back();  // the blank line before the next heading
    while (!entry->empty() && entry->front() == '\n') entry->erase(0, 1);
    return entry;
}

}  // namespace gpupart
