/* nvrtc.c: compiling a configuration to a cubin with NVRTC (no GPU needed):
 * the options it is compiled with, the source hash and the cubin key that
 * names exactly that input, and the reference and utility kernels. */
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

#define FNV_OFFSET 0xCBF29CE484222325ull

const char *tpl_source_hash(const tpl_family *fam)
{
    /* Families are static, so the hash is computed once per family. */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct { const tpl_family *fam; char hex[20]; } memo[32];
    static int n_memo;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_memo; i++) {
        if (memo[i].fam == fam) {
            pthread_mutex_unlock(&lock);
            return memo[i].hex;
        }
    }
    size_t len = 0;
    const char *text = tpl_source_text(fam->source, &len);
    unsigned long long h = fnv1a(FNV_OFFSET, text ? text : "", text ? len : 0);
    h = fnv1a(h, fam->fixed_options, strlen(fam->fixed_options));
    static char fallback[20];
    char *out = fallback;
    if (n_memo < 32) {
        memo[n_memo].fam = fam;
        out = memo[n_memo++].hex;
    }
    snprintf(out, 20, "%016llx", h);
    pthread_mutex_unlock(&lock);
    return out;
}

static char nvrtc_version_text[16];
static pthread_once_t nvrtc_version_once = PTHREAD_ONCE_INIT;

static void nvrtc_version_init(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        snprintf(nvrtc_version_text, sizeof nvrtc_version_text, "%d.%d", major, minor);
    else
        snprintf(nvrtc_version_text, sizeof nvrtc_version_text, "unknown");
}

const char *tpl_nvrtc_version(void)
{
    pthread_once(&nvrtc_version_once, nvrtc_version_init);
    return nvrtc_version_text;
}

void tpl_arch_name(int cc_major, int cc_minor, char *out, size_t len)
{
    snprintf(out, len, "sm_%d%d", cc_major, cc_minor);
}

/* NVRTC options of a configuration, as an argv (strings in storage). */
#define OPT_MAX (TPL_MAX_PARAMS + 16)
typedef struct opt_list {
    char storage[4096];
    const char *argv[OPT_MAX];
    int argc;
    size_t used;
} opt_list;

static void opt_add(opt_list *o, const char *text)
{
    size_t len = strlen(text) + 1;
    if (o->argc >= OPT_MAX || o->used + len > sizeof o->storage)
        return;
    memcpy(o->storage + o->used, text, len);
    o->argv[o->argc++] = o->storage + o->used;
    o->used += len;
}

const char *tpl_target_arch(const tpl_family *fam, const int *cfg, const char *arch)
{
    if (!fam || !cfg || !fam->target_arch)
        return arch;
    return fam->target_arch(cfg, arch);
}

void tpl_compile_config(const tpl_family *fam, const int *cfg, int *out)
{
    for (int i = 0; i < fam->n_params; i++) {
        const tpl_param *p = &fam->params[i];
        out[i] = p->host_only ? p->values[0]
                 : p->runtime_from && cfg[i] >= p->runtime_from ? p->runtime_from : cfg[i];
    }
}

static void opt_build(const tpl_family *fam, const int *given, const char *arch, opt_list *o)
{
    char buf[256];
    int compiled[TPL_MAX_PARAMS];
    const int *cfg = given;
    if (fam && given) {
        tpl_compile_config(fam, given, compiled);
        cfg = compiled;
    }
    memset(o, 0, sizeof *o);
    const char *target = tpl_target_arch(fam, cfg, arch);
    snprintf(buf, sizeof buf, "-arch=%s", target ? target : "none");
    opt_add(o, buf);
    opt_add(o, "-std=c++17");
    opt_add(o, "-default-device");
    for (int i = 0; fam && cfg && i < fam->n_params; i++) {
        if (fam->params[i].host_only ||
            (fam->params[i].omit_first && cfg[i] == fam->params[i].values[0]))
            continue;
        snprintf(buf, sizeof buf, "-D%s=%d", fam->params[i].name, cfg[i]);
        opt_add(o, buf);
    }
    /* fixed_options: space-separated words */
    const char *p = fam ? fam->fixed_options : "";
    while (p && *p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n > 0 && n < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            opt_add(o, buf);
        }
        p += n;
    }
}

void tpl_options_string(const tpl_family *fam, const int *cfg, const char *arch,
                        char *out, size_t len)
{
    opt_list o;
    opt_build(fam, cfg, arch, &o);
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < o.argc && used < len; i++) {
        int w = snprintf(out + used, len - used, "%s%s", i ? " " : "", o.argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void tpl_binary_key(const tpl_family *fam, const int *cfg, const char *arch,
                    char *out, size_t len)
{
    char options[4096];
    tpl_options_string(fam, cfg, arch, options, sizeof options);
    const char *hash = tpl_source_hash(fam);
    const char *version = tpl_nvrtc_version();
    unsigned long long h = fnv1a(FNV_OFFSET, hash, strlen(hash));
    h = fnv1a(h, "|", 1);
    h = fnv1a(h, options, strlen(options));
    h = fnv1a(h, "|", 1);
    h = fnv1a(h, version, strlen(version));
    int compiled[TPL_MAX_PARAMS];
    tpl_compile_config(fam, cfg, compiled);
    const char *target = tpl_target_arch(fam, compiled, arch);
    snprintf(out, len, "%s-%s-%016llx", fam->name, target ? target : arch, h);
}

/* ---------------- compiling ---------------- */

static at_status compile_source(const char *name, const char *text, const opt_list *o,
                                void **cubin, size_t *cubin_size, char **log)
{
    *cubin = NULL;
    *cubin_size = 0;
    if (log)
        *log = NULL;
    if (!text) {
        if (log) {
            *log = malloc(128);
            if (*log)
                snprintf(*log, 128, "source %s is not embedded in this build", name);
        }
        return AT_ERR_NOT_FOUND;
    }
    nvrtcProgram prog;
    nvrtcResult rc = nvrtcCreateProgram(&prog, text, name, 0, NULL, NULL);
    if (rc != NVRTC_SUCCESS) {
        if (log) {
            *log = malloc(256);
            if (*log)
                snprintf(*log, 256, "nvrtcCreateProgram: %s", nvrtcGetErrorString(rc));
        }
        return rc == NVRTC_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_COMPILE;
    }
    rc = nvrtcCompileProgram(prog, o->argc, o->argv);
    size_t log_size = 0;
    if (log && nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        *log = malloc(log_size);
        if (*log && nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS) {
            free(*log);
            *log = NULL;
        }
    }
    at_status status = AT_OK;
    if (rc != NVRTC_SUCCESS) {
        status = AT_ERR_COMPILE;
        if (log && !*log) {
            *log = malloc(256);
            if (*log)
                snprintf(*log, 256, "nvrtcCompileProgram: %s", nvrtcGetErrorString(rc));
        }
    } else {
        size_t size = 0;
        if (nvrtcGetCUBINSize(prog, &size) != NVRTC_SUCCESS || size == 0) {
            status = AT_ERR_COMPILE;
        } else if (!(*cubin = malloc(size))) {
            status = AT_ERR_NO_MEMORY;
        } else if (nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
            free(*cubin);
            *cubin = NULL;
            status = AT_ERR_COMPILE;
        } else {
            *cubin_size = size;
        }
    }
    nvrtcDestroyProgram(&prog);
    return status;
}

at_status tpl_compile(const tpl_family *fam, const int *cfg, const char *arch,
                      void **cubin, size_t *cubin_size, char **log)
{
    if (!tpl_target_arch(fam, cfg, arch)) {
        *cubin = NULL;
        *cubin_size = 0;
        if (log) {
            *log = malloc(160);
            if (*log)
                snprintf(*log, 160, "this %s configuration cannot run on %s", fam->name, arch);
        }
        return AT_ERR_UNSUPPORTED;
    }
    opt_list o;
    opt_build(fam, cfg, arch, &o);
    return compile_source(fam->source, tpl_source_text(fam->source, NULL), &o, cubin,
                          cubin_size, log);
}

at_status tpl_compile_reference(const char *arch, void **cubin, size_t *size, char **log)
{
    opt_list o;
    opt_build(NULL, NULL, arch, &o);
    return compile_source("reference.cu", tpl_source_text("reference.cu", NULL), &o,
                          cubin, size, log);
}

at_status tpl_compile_utility(const char *name, const char *arch, void **cubin, size_t *size,
                              char **log)
{
    const char *text = tpl_source_text(name, NULL);
    if (!text) {
        *cubin = NULL;
        *size = 0;
        *log = NULL;
        return AT_ERR_NOT_FOUND;
    }
    opt_list o;
    opt_build(NULL, NULL, arch, &o);
    return compile_source(name, text, &o, cubin, size, log);
}
