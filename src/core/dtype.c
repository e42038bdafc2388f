/* dtype names, sizes and PyTorch's promotion rules. */
#include <stdatomic.h>
#include <string.h>

#include "core/internal.h"

#define WEFT__DTYPE_NAME(e, name, size, cat) name,
static const char* const dtype_names[] = {WEFT_DTYPE_LIST(WEFT__DTYPE_NAME)};
#undef WEFT__DTYPE_NAME
#define WEFT__DTYPE_SIZE(e, name, size, cat) size,
static const size_t dtype_sizes[] = {WEFT_DTYPE_LIST(WEFT__DTYPE_SIZE)};
#undef WEFT__DTYPE_SIZE
#define WEFT__DTYPE_CAT(e, name, size, cat) cat,
static const int dtype_categories[] = {WEFT_DTYPE_LIST(WEFT__DTYPE_CAT)};
#undef WEFT__DTYPE_CAT

bool weft_dtype_is_valid(int t) { return t >= 0 && t < WEFT_DTYPE_COUNT; }

const char* weft_dtype_name(weft_dtype t) {
  return weft_dtype_is_valid((int)t) ? dtype_names[t] : "?";
}

size_t weft_dtype_size(weft_dtype t) { return weft_dtype_is_valid((int)t) ? dtype_sizes[t] : 0; }

bool weft_dtype_is_floating(weft_dtype t) {
  return weft_dtype_is_valid((int)t) && dtype_categories[t] == 2;
}

bool weft_dtype_is_integral(weft_dtype t, bool include_bool) {
  if (!weft_dtype_is_valid((int)t)) return false;
  return dtype_categories[t] == 1 || (include_bool && t == WEFT_BOOL);
}

/* PyTorch's aliases (torch.float == torch.float32, torch.half, torch.long, ...). */
static const struct {
  const char* alias;
  weft_dtype dtype;
} dtype_aliases[] = {
    {"float", WEFT_FLOAT32}, {"double", WEFT_FLOAT64}, {"half", WEFT_FLOAT16},
    {"long", WEFT_INT64},    {"int", WEFT_INT32},      {"short", WEFT_INT16},
};

int weft_dtype_from_name(const char* name, weft_dtype* out) {
  if (!name) return weft__error(WEFT_TYPE_ERROR, "dtype: expected a dtype name, got null");
  const char* n = strncmp(name, "torch.", 6) == 0 ? name + 6 : name;
  for (int i = 0; i < WEFT_DTYPE_COUNT; i++) {
    if (strcmp(n, dtype_names[i]) == 0) {
      *out = (weft_dtype)i;
      return WEFT_OK;
    }
  }
  for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++) {
    if (strcmp(n, dtype_aliases[i].alias) == 0) {
      *out = dtype_aliases[i].dtype;
      return WEFT_OK;
    }
  }
  return weft__error(WEFT_TYPE_ERROR,
                     "dtype: unknown dtype '%s' (expected one of bool, uint8, int8, int16, int32, "
                     "int64, float16, bfloat16, float32, float64)",
                     name);
}

/* The rules behind PyTorch's _promoteTypesLookup table, for the dtypes weft has. */
weft_dtype weft_promote_types(weft_dtype a, weft_dtype b) {
  if (a == b) return a;
  if (a == WEFT_BOOL) return b;
  if (b == WEFT_BOOL) return a;
  bool fa = weft_dtype_is_floating(a), fb = weft_dtype_is_floating(b);
  if (fa && fb) {
    /* float16 and bfloat16 have no common 16-bit type */
    if (dtype_sizes[a] == 2 && dtype_sizes[b] == 2) return WEFT_FLOAT32;
    return dtype_sizes[a] >= dtype_sizes[b] ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  /* both integral: uint8 and int8 meet at int16; otherwise the wider wins */
  if ((a == WEFT_UINT8 && b == WEFT_INT8) || (a == WEFT_INT8 && b == WEFT_UINT8)) return WEFT_INT16;
  return dtype_sizes[a] >= dtype_sizes[b] ? a : b;
}

/* torch.can_cast: no float -> integral, no non-bool -> bool. */
bool weft_can_cast(weft_dtype from, weft_dtype to) {
  if (weft_dtype_is_floating(from) && weft_dtype_is_integral(to, false)) return false;
  if (from != WEFT_BOOL && to == WEFT_BOOL) return false;
  return true;
}

const char* weft_device_name(weft_device d) {
  switch (d) {
    case WEFT_DEVICE_CPU: return "cpu";
    case WEFT_DEVICE_META: return "meta";
    case WEFT_DEVICE_WEBGPU: return "webgpu";
    default: return "?";
  }
}

int weft_device_from_name(const char* name, weft_device* out) {
  if (name && strcmp(name, "cpu") == 0) {
    *out = WEFT_DEVICE_CPU;
    return WEFT_OK;
  }
  if (name && strcmp(name, "meta") == 0) {
    *out = WEFT_DEVICE_META;
    return WEFT_OK;
  }
  if (name && strcmp(name, "webgpu") == 0) {
    *out = WEFT_DEVICE_WEBGPU;
    return WEFT_OK;
  }
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "device: Expected one of cpu, meta, webgpu device type at start of device string: %s",
                     name ? name : "(null)");
}

static const char* const format_names[] = {"contiguous_format", "channels_last", "channels_last_3d",
                                           "preserve_format"};

const char* weft_memory_format_name(weft_memory_format f) {
  return (unsigned)f < WEFT_MEMORY_FORMAT_COUNT ? format_names[f] : "?";
}

int weft_memory_format_from_name(const char* name, weft_memory_format* out) {
  const char* n = name && strncmp(name, "torch.", 6) == 0 ? name + 6 : name;
  for (int i = 0; n && i < WEFT_MEMORY_FORMAT_COUNT; i++) {
    if (strcmp(n, format_names[i]) == 0) {
      *out = (weft_memory_format)i;
      return WEFT_OK;
    }
  }
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "memory_format: unknown memory format '%s' (expected contiguous_format, "
                     "channels_last, channels_last_3d or preserve_format)",
                     name ? name : "(null)");
}

static _Atomic int default_dtype = WEFT_FLOAT32;

weft_dtype weft_get_default_dtype(void) { return (weft_dtype)atomic_load(&default_dtype); }

int weft_set_default_dtype(weft_dtype t) {
  if (t != WEFT_FLOAT32 && t != WEFT_FLOAT64) {
    return weft__error(WEFT_TYPE_ERROR, "set_default_dtype: only float32 and float64 can be the default dtype, "
                       "not %s", weft_dtype_name(t));
  }
  atomic_store(&default_dtype, (int)t);
  return WEFT_OK;
}
