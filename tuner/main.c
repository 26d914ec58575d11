/* main.c: entry point of the `autotune` command; everything else lives in
 * the other tuner/ files so the tests can link them. */
#include "tn.h"

int main(int argc, char **argv)
{
    return tn_main(argc, argv);
}
