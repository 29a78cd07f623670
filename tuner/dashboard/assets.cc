#include "tuner/dashboard/assets.h"

extern "C" {
extern const char tunefarm_dashboard_index_html[], tunefarm_dashboard_index_html_end[];
extern const char tunefarm_dashboard_app_js[], tunefarm_dashboard_app_js_end[];
extern const char tunefarm_dashboard_style_css[], tunefarm_dashboard_style_css_end[];
extern const char tunefarm_dashboard_echarts_js[], tunefarm_dashboard_echarts_js_end[];
extern const char tunefarm_dashboard_favicon_svg[], tunefarm_dashboard_favicon_svg_end[];
}

namespace tunefarm::tuner::dashboard {
namespace {

std::string_view Between(const char* begin, const char* end) { return std::string_view(begin, size_t(end - begin)); }

}  // namespace

const std::vector<Asset>& Assets() {
  static const std::vector<Asset> kAssets = {
      {"/", "text/html; charset=utf-8", Between(tunefarm_dashboard_index_html, tunefarm_dashboard_index_html_end)},
      {"/assets/app.js", "text/javascript; charset=utf-8",
       Between(tunefarm_dashboard_app_js, tunefarm_dashboard_app_js_end)},
      {"/assets/style.css", "text/css; charset=utf-8",
       Between(tunefarm_dashboard_style_css, tunefarm_dashboard_style_css_end)},
      {"/assets/echarts.min.js", "text/javascript; charset=utf-8",
       Between(tunefarm_dashboard_echarts_js, tunefarm_dashboard_echarts_js_end)},
      {"/assets/favicon.svg", "image/svg+xml",
       Between(tunefarm_dashboard_favicon_svg, tunefarm_dashboard_favicon_svg_end)},
  };
  return kAssets;
}

}  // namespace tunefarm::tuner::dashboard
