/* Dispatch keys and key sets (c10/core/DispatchKey.h, DispatchKeySet.h):
 * names, functionality/backend split, offsets-and-masks table index, alias
 * expansion, thread-local included/excluded sets. */
#include <stdio.h>
#include <string.h>

#include "dispatch/dispatch_internal.h"

typedef struct {
  const char* name;
  weft_dispatch_key functionality; /* Undefined for alias keys */
  weft_backend_component backend;  /* INVALID unless a per-backend runtime key */
  bool per_backend;                /* functionality keys: has one runtime key per backend */
} key_info;

#define FUNC_INFO(N, s, K, p, ps) [WEFT_KEY_##N] = {s, WEFT_KEY_##N, WEFT_BACKEND_INVALID, IS_PB_##K},
#define IS_PB_PER_BACKEND true
#define IS_PB_SINGLE false
/* Per-backend runtime keys: the tuple (F, p, ps) rides through WEFT_BACKEND_LIST's P. */
#define INST_INFOS(N, s, K, p, ps) WEFT__IF_##K(WEFT_BACKEND_LIST(INST_INFO, (N, p, ps)))
#define INST_INFO(P, B, bs) INST_INFO_I(B, bs, INST_UNPACK P)
#define INST_UNPACK(F, p, ps) F, p, ps
#define INST_INFO_I(...) INST_INFO_II(__VA_ARGS__)
#define INST_INFO_II(B, bs, F, p, ps) [WEFT_KEY_##p##B] = {ps bs, WEFT_KEY_##F, WEFT_BACKEND_##B, false},
#define ALIAS_INFO(N, s) [WEFT_KEY_##N] = {s, WEFT_KEY_UNDEFINED, WEFT_BACKEND_INVALID, false},

static const key_info key_infos[WEFT_KEY_COUNT] = {
    [WEFT_KEY_UNDEFINED] = {"Undefined", WEFT_KEY_UNDEFINED, WEFT_BACKEND_INVALID, false},
    WEFT_FUNCTIONALITY_LIST(FUNC_INFO)
    [WEFT_KEY__END_OF_FUNCTIONALITY] = {"?", WEFT_KEY_UNDEFINED, WEFT_BACKEND_INVALID, false},
    WEFT_FUNCTIONALITY_LIST(INST_INFOS)
    [WEFT_KEY__END_OF_RUNTIME] = {"?", WEFT_KEY_UNDEFINED, WEFT_BACKEND_INVALID, false},
    WEFT_ALIAS_KEY_LIST(ALIAS_INFO)};

#define MASK_PER_BACKEND WEFT_FULL_BACKEND_MASK
#define MASK_SINGLE 0
#define OFFSET_MASK(N, s, K, p, ps) [WEFT_KEY_##N] = {WEFT__OFF_##N, MASK_##K},
const weft__offset_and_mask weft__offsets_and_masks[WEFT_NUM_FUNCTIONALITIES] = {
    [WEFT_KEY_UNDEFINED] = {0, 0}, WEFT_FUNCTIONALITY_LIST(OFFSET_MASK)};

WEFT_THREAD_LOCAL weft__dispatch_tls weft__dtls;

static bool valid_key(weft_dispatch_key k) { return (int)k >= 0 && k < WEFT_KEY_COUNT; }

const char* weft_dispatch_key_name(weft_dispatch_key k) {
  return valid_key(k) ? key_infos[k].name : "?";
}

weft_status weft_dispatch_key_from_name(const char* name, weft_dispatch_key* out) {
  for (int k = 0; k < WEFT_KEY_COUNT; k++) {
    if (k == WEFT_KEY__END_OF_FUNCTIONALITY || k == WEFT_KEY__END_OF_RUNTIME) continue;
    if (strcmp(key_infos[k].name, name) == 0) {
      *out = (weft_dispatch_key)k;
      return WEFT_OK;
    }
  }
  return weft__error(WEFT_INVALID_ARGUMENT, "unknown dispatch key '%s'", name);
}

bool weft_dispatch_key_is_alias(weft_dispatch_key k) {
  return k > WEFT_KEY__END_OF_RUNTIME && k < WEFT_KEY_COUNT;
}

bool weft_dispatch_key_is_runtime(weft_dispatch_key k) {
  if (k > WEFT_KEY_UNDEFINED && k < WEFT_KEY__END_OF_FUNCTIONALITY) return !key_infos[k].per_backend;
  return k > WEFT_KEY__END_OF_FUNCTIONALITY && k < WEFT_KEY__END_OF_RUNTIME;
}

weft_dispatch_key weft_dispatch_key_functionality(weft_dispatch_key k) {
  return valid_key(k) ? key_infos[k].functionality : WEFT_KEY_UNDEFINED;
}

weft_backend_component weft_dispatch_key_backend(weft_dispatch_key k) {
  return valid_key(k) ? key_infos[k].backend : WEFT_BACKEND_INVALID;
}

weft_dispatch_key weft_dispatch_key_for(weft_dispatch_key f, weft_backend_component b) {
  if (f <= WEFT_KEY_UNDEFINED || f >= WEFT_KEY__END_OF_FUNCTIONALITY) return WEFT_KEY_UNDEFINED;
  if (!key_infos[f].per_backend || b == WEFT_BACKEND_INVALID) return f;
  for (int k = WEFT_KEY__END_OF_FUNCTIONALITY + 1; k < WEFT_KEY__END_OF_RUNTIME; k++)
    if (key_infos[k].functionality == f && key_infos[k].backend == b) return (weft_dispatch_key)k;
  return WEFT_KEY_UNDEFINED;
}

int weft_num_runtime_entries(void) { return WEFT__NUM_ENTRIES; }

weft_keyset weft_keyset_of(weft_dispatch_key k) {
  if (!valid_key(k) || k == WEFT_KEY_UNDEFINED || weft_dispatch_key_is_alias(k)) return 0;
  if (k == WEFT_KEY__END_OF_FUNCTIONALITY || k == WEFT_KEY__END_OF_RUNTIME) return 0;
  weft_keyset ks = WEFT__FBIT(key_infos[k].functionality);
  if (key_infos[k].backend != WEFT_BACKEND_INVALID) ks |= WEFT__BBIT(key_infos[k].backend);
  return ks;
}

bool weft_keyset_has(weft_keyset ks, weft_dispatch_key k) {
  weft_keyset m = weft_keyset_of(k);
  return m && (ks & m) == m;
}

weft_dispatch_key weft_keyset_highest(weft_keyset ks) {
  ks &= WEFT__VALID_BITS;
  int f = weft__highest_bit(ks >> WEFT_NUM_BACKENDS);
  if (f == 0) return WEFT_KEY_UNDEFINED;
  int b = weft__highest_bit(ks & WEFT_FULL_BACKEND_MASK);
  return weft_dispatch_key_for((weft_dispatch_key)f, (weft_backend_component)b);
}

int weft_keyset_table_index(weft_keyset ks) { return weft__table_index(ks & WEFT__VALID_BITS); }

int weft_dispatch_key_table_index(weft_dispatch_key k) {
  if (!weft_dispatch_key_is_runtime(k)) return -1;
  return weft__table_index(weft_keyset_of(k));
}

weft_dispatch_key weft_table_index_key(int i) {
  for (int k = 1; k < WEFT_KEY__END_OF_RUNTIME; k++)
    if (weft_dispatch_key_is_runtime((weft_dispatch_key)k) &&
        weft_dispatch_key_table_index((weft_dispatch_key)k) == i)
      return (weft_dispatch_key)k;
  return WEFT_KEY_UNDEFINED;
}

weft_keyset weft_keyset_full_after(weft_dispatch_key k) {
  weft_dispatch_key f = weft_dispatch_key_functionality(k);
  if (f == WEFT_KEY_UNDEFINED) return 0;
  return WEFT__FBIT(f) - 1;
}

weft_keyset weft_alias_runtime_keyset(weft_dispatch_key k) {
  const weft_keyset dense = WEFT__FBIT(WEFT_KEY_DENSE) | WEFT_FULL_BACKEND_MASK;
  const weft_keyset autograd = WEFT__FBIT(WEFT_KEY_AUTOGRAD_FUNCTIONALITY) | WEFT_FULL_BACKEND_MASK;
  switch (k) {
    case WEFT_KEY_AUTOGRAD: return autograd;
    case WEFT_KEY_COMPOSITE_EXPLICIT_AUTOGRAD: return dense;
    case WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD: return dense | autograd;
    default: return weft_dispatch_key_is_runtime(k) ? weft_keyset_of(k) : 0;
  }
}

static weft_backend_component device_backend(weft_device d) {
  switch (d) {
    case WEFT_DEVICE_META: return WEFT_BACKEND_META;
    case WEFT_DEVICE_WEBGPU: return WEFT_BACKEND_WEBGPU;
    default: return WEFT_BACKEND_CPU;
  }
}

weft_keyset weft_device_keyset(weft_device d) {
  return WEFT__FBIT(WEFT_KEY_DENSE) | WEFT__FBIT(WEFT_KEY_AUTOGRAD_FUNCTIONALITY) |
         WEFT__FBIT(WEFT_KEY_AD_INPLACE_OR_VIEW) | WEFT__BBIT(device_backend(d));
}

weft_keyset weft_device_backend_keyset(weft_device d) {
  return WEFT__FBIT(WEFT_KEY_DENSE) | WEFT__BBIT(device_backend(d));
}

void weft_keyset_format(weft_keyset ks, char* buf, size_t cap) {
  size_t n = 0;
  if (cap == 0) return;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "[");
  bool first = true;
  for (int f = 1; f < WEFT_NUM_FUNCTIONALITIES; f++) {
    if (!(ks & WEFT__FBIT(f))) continue;
    bool any_backend = false;
    if (key_infos[f].per_backend) {
      for (int b = 1; b <= WEFT_NUM_BACKENDS; b++) {
        if (!(ks & WEFT__BBIT(b))) continue;
        any_backend = true;
        weft_dispatch_key k = weft_dispatch_key_for((weft_dispatch_key)f, (weft_backend_component)b);
        n += (size_t)snprintf(buf + (n < cap ? n : cap - 1), n < cap ? cap - n : 1, "%s%s",
                              first ? "" : ", ", key_infos[k].name);
        first = false;
      }
    }
    if (!any_backend) {
      n += (size_t)snprintf(buf + (n < cap ? n : cap - 1), n < cap ? cap - n : 1, "%s%s",
                            first ? "" : ", ", key_infos[f].name);
      first = false;
    }
  }
  snprintf(buf + (n < cap ? n : cap - 1), n < cap ? cap - n : 1, "]");
}

weft_keyset weft_autograd_keyset(void) { return WEFT__FBIT(WEFT_KEY_AUTOGRAD_FUNCTIONALITY); }
weft_keyset weft_autograd_keyset_with_ad_inplace_or_view(void) {
  return weft_autograd_keyset() | WEFT__FBIT(WEFT_KEY_AD_INPLACE_OR_VIEW);
}
weft_keyset weft_after_autograd_keyset(void) {
  return weft_keyset_full_after(WEFT_KEY_AUTOGRAD_FUNCTIONALITY);
}
weft_keyset weft_after_ad_inplace_or_view_keyset(void) {
  return weft_keyset_full_after(WEFT_KEY_AD_INPLACE_OR_VIEW);
}

/* ---- thread-local sets ---- */
weft_keyset weft_tls_included(void) { return weft__dtls.included_x ^ WEFT__DEFAULT_INCLUDED; }
weft_keyset weft_tls_excluded(void) { return weft__dtls.excluded_x ^ WEFT__DEFAULT_EXCLUDED; }

static weft_tls_guard tls_save(void) {
  weft_tls_guard g = {weft__dtls.included_x, weft__dtls.excluded_x};
  return g;
}

weft_tls_guard weft_tls_include(weft_keyset ks) {
  weft_tls_guard g = tls_save();
  weft__dtls.included_x = (weft_tls_included() | ks) ^ WEFT__DEFAULT_INCLUDED;
  return g;
}

weft_tls_guard weft_tls_exclude(weft_keyset ks) {
  weft_tls_guard g = tls_save();
  weft__dtls.excluded_x = (weft_tls_excluded() | ks) ^ WEFT__DEFAULT_EXCLUDED;
  return g;
}

void weft_tls_restore(weft_tls_guard g) {
  weft__dtls.included_x = g.included;
  weft__dtls.excluded_x = g.excluded;
}

weft_tls_guard weft_dispatch_below_ad_inplace_or_view(void) {
  return weft_tls_exclude(weft_autograd_keyset_with_ad_inplace_or_view());
}
