// The dashboard page's files, embedded into the binary at build time: tuner/CMakeLists.txt turns
// its one DASHBOARD_FILES list (the page's files from tuner/dashboard/web/ and the charting library
// from its npm package) into assembly that .incbin's each file and a table of them, so the
// dashboard works offline and nothing is fetched at run time. Private to tuner/dashboard/.
#ifndef TUNEFARM_TUNER_DASHBOARD_ASSETS_H_
#define TUNEFARM_TUNER_DASHBOARD_ASSETS_H_

#include <string_view>
#include <vector>

namespace tunefarm::tuner::dashboard {

struct Asset {
  std::string_view path;  // the URL path, e.g. "/assets/js/main.js"; "/" for index.html
  std::string_view content_type;
  std::string_view data;
};

// Every embedded file, in DASHBOARD_FILES's order.
const std::vector<Asset>& Assets();

}  // namespace tunefarm::tuner::dashboard

#endif  // TUNEFARM_TUNER_DASHBOARD_ASSETS_H_
