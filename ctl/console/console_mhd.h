/* SPDX-License-Identifier: MIT */
/*
 * console_mhd.h - libmicrohttpd, loaded when `ledgerctl console` starts
 * and not before (console_mhd.c): the library and the TLS stack it
 * brings take longer to load than most ledgerctl commands take to run.
 * Included after <microhttpd.h> by console.c alone; its MHD_ calls then
 * go through the pointers loaded here.
 */
#ifndef LF_CONSOLE_MHD_H
#define LF_CONSOLE_MHD_H

#include <microhttpd.h>

/* libmicrohttpd's ABI has been .so.12 since 0.9.x, 1.0 included. */
#define CONSOLE_MHD_SONAME "libmicrohttpd.so.12"

/* Every libmicrohttpd function console.c calls. */
#define CONSOLE_MHD_FUNCTIONS(X)                                               \
	X(MHD_add_response_header)                                             \
	X(MHD_create_response_from_buffer)                                     \
	X(MHD_create_response_from_callback)                                   \
	X(MHD_destroy_response)                                                \
	X(MHD_get_connection_info)                                             \
	X(MHD_get_connection_values)                                           \
	X(MHD_lookup_connection_value)                                         \
	X(MHD_queue_response)                                                  \
	X(MHD_start_daemon)                                                    \
	X(MHD_stop_daemon)

struct console_mhd {
#define CONSOLE_MHD_FIELD(f) __typeof__(f) *f;
	CONSOLE_MHD_FUNCTIONS(CONSOLE_MHD_FIELD)
#undef CONSOLE_MHD_FIELD
};

extern struct console_mhd console_mhd;

/* Load the library: 0, or -1 with the reason said on stderr. */
int console_mhd_load(void);

#ifndef CONSOLE_MHD_LOADER
#define MHD_add_response_header (console_mhd.MHD_add_response_header)
#define MHD_create_response_from_buffer                                        \
	(console_mhd.MHD_create_response_from_buffer)
#define MHD_create_response_from_callback                                      \
	(console_mhd.MHD_create_response_from_callback)
#define MHD_destroy_response	    (console_mhd.MHD_destroy_response)
#define MHD_get_connection_info	    (console_mhd.MHD_get_connection_info)
#define MHD_get_connection_values   (console_mhd.MHD_get_connection_values)
#define MHD_lookup_connection_value (console_mhd.MHD_lookup_connection_value)
#define MHD_queue_response	    (console_mhd.MHD_queue_response)
#define MHD_start_daemon	    (console_mhd.MHD_start_daemon)
#define MHD_stop_daemon		    (console_mhd.MHD_stop_daemon)
#endif

#endif
