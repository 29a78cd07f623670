/* Compiles the C API header as C (no C++ leaks into it) and exercises its error path. */
#include "tunefarm/runtime/c_api.h"

int tunefarm_c_api_missing_file_fails(void) {
  char* error = 0;
  TunefarmModel* m = tunefarm_model_load("/nonexistent/model.tfa", &error);
  int ok = m == 0 && error != 0;
  tunefarm_free_string(error);
  return ok;
}
