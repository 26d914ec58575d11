// nvrtc_check.c: compiles templates/tcgemm.cu with NVRTC for sm_90a (or another arch) with the
// given -D options and writes the cubin, so SASS, registers and spills can be read with no GPU.
// usage: nvrtc_check FILE.cu OUT.cubin ARCH [-DNAME=VALUE ...]; exit 1 with the log on failure.
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(n + 1);
    if (s && fread(s, 1, n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s FILE.cu OUT.cubin ARCH [-D...]\n", argv[0]);
        return 2;
    }
    char *src = slurp(argv[1]);
    if (!src) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    const char *opts[64];
    char arch[64];
    int no = 0;
    snprintf(arch, sizeof arch, "-arch=%s", argv[3]);
    opts[no++] = arch;
    opts[no++] = "-std=c++17";
    opts[no++] = "-Xptxas=-v";
    for (int i = 4; i < argc && no < 63; i++)
        opts[no++] = argv[i];
    nvrtcProgram p;
    nvrtcCreateProgram(&p, src, "tcgemm.cu", 0, NULL, NULL);
    nvrtcResult r = nvrtcCompileProgram(p, no, opts);
    size_t ls;
    nvrtcGetProgramLogSize(p, &ls);
    char *log = malloc(ls + 1);
    nvrtcGetProgramLog(p, log);
    fprintf(stderr, "%s", log);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "compile failed: %s\n", nvrtcGetErrorString(r));
        return 1;
    }
    size_t cs;
    nvrtcGetCUBINSize(p, &cs);
    char *cubin = malloc(cs);
    nvrtcGetCUBIN(p, cubin);
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(cubin, 1, cs, f) != cs) {
        fprintf(stderr, "cannot write %s\n", argv[2]);
        return 1;
    }
    fclose(f);
    return 0;
}
