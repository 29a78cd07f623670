// The dashboard page's files, embedded into the binary at build time (assets.S.in: the page's own
// files from tuner/dashboard/web/ and the charting library from its npm package), so the
// dashboard works offline and nothing is fetched at run time. Private to tuner/dashboard/.
#ifndef TUNEFARM_TUNER_DASHBOARD_ASSETS_H_
#define TUNEFARM_TUNER_DASHBOARD_ASSETS_H_

#include <string_view>
#include <vector>

namespace tunefarm::tuner::dashboard {

struct Asset {
  std::string_view path;  // the URL path, e.g. "/assets/app.js"
  std::string_view content_type;
  std::string_view data;
};

const std::vector<Asset>& Assets();

}  // namespace tunefarm::tuner::dashboard

#endif  // TUNEFARM_TUNER_DASHBOARD_ASSETS_H_
