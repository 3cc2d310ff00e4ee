/* SPDX-License-Identifier: MIT */
/*
 * fuzz_request.h - the libFuzzer entry point of the request harness, shared
 * by the libFuzzer build and the plain replay program.
 */
#ifndef LF_FUZZ_REQUEST_H
#define LF_FUZZ_REQUEST_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
