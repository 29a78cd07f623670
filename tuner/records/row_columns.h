// One column list per row struct: each column's SQL expression, in order, with the member it is
// read into. SelectList() writes a SELECT's list from it and ReadRow() reads a result row by the
// same list, so a column's position is written once, not once in the SQL and again as a number.
// Private to tuner/records/.
#ifndef TUNEFARM_TUNER_RECORDS_ROW_COLUMNS_H_
#define TUNEFARM_TUNER_RECORDS_ROW_COLUMNS_H_

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tuner/records/sql.h"

namespace tunefarm::tuner {

// The costs column: a JSON array of numbers; what is not a number is left out.
std::vector<double> ParseCostsColumn(const std::string& json);

template <typename Row>
struct Column {
  std::string sql;  // the expression, e.g. "t.id" or "COALESCE(t.job_id, 0)"
  std::variant<int64_t Row::*, int Row::*, double Row::*, std::string Row::*, std::vector<double> Row::*> member;
};

template <typename Row, size_t N>
std::string SelectList(const std::array<Column<Row>, N>& columns) {
  std::string list;
  for (const auto& c : columns) list += (list.empty() ? "" : ", ") + c.sql;
  return list;
}

template <typename Row, size_t N>
Row ReadRow(const SqlQuery& q, const std::array<Column<Row>, N>& columns) {
  Row row;
  for (size_t i = 0; i < N; ++i) {
    const int at = int(i);
    std::visit(
        [&](auto member) {
          using Value = std::remove_reference_t<decltype(row.*member)>;
          if constexpr (std::is_same_v<Value, int64_t>) {
            row.*member = q.Int(at);
          } else if constexpr (std::is_same_v<Value, int>) {
            row.*member = int(q.Int(at));
          } else if constexpr (std::is_same_v<Value, double>) {
            row.*member = q.Double(at);
          } else if constexpr (std::is_same_v<Value, std::string>) {
            row.*member = q.Text(at);
          } else {
            row.*member = ParseCostsColumn(q.Text(at));
          }
        },
        columns[i].member);
  }
  return row;
}

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_ROW_COLUMNS_H_
