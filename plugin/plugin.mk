#
# Copyright (c) ucx-gaudi contributors. ALL RIGHTS RESERVED.
# See file LICENSE for terms.
#
# The out-of-tree plugin's libraries, built the way UCX builds its own
# modules but outside UCX's tree (GNU make; run by the top-level Makefile of
# a tree configured --with-ucx, which passes the variables below):
#
#   libuct_hlgaudi.so.0           the UCT module: drv/, base/, copy/, ipc/
#   libgaudi_emu.so.0             the emulator, which the module loads from
#                                 its own directory
#   libucx_perftest_hlgaudi.so.0  ucx_perftest's allocator for -m gaudi
#
# The source lists are the in-tree build's (src/uct/gaudi/*/sources.am), so
# a file added there is built here too.
#
# Variables: TOP_SRCDIR, OUT (objects and libraries), FEATURES_DIR (holds
# ucx_gaudi_features.h), UCX_SRC (the configured UCX tree), UCX_PREFIX (the
# UCX installed from it), UCX_CFLAGS (that tree's BASE_CFLAGS), CC; for
# install: LIBDIR.
#

GAUDI_SRC := $(TOP_SRCDIR)/src/uct/gaudi
PERF_SRC  := $(TOP_SRCDIR)/src/tools/perf/gaudi

# the .c files of a sources.am (one per line, after a tab)
sources_of = $(addprefix $(GAUDI_SRC)/,$(shell sed -n \
                 's/^[[:space:]]*\([a-z]*\/[A-Za-z0-9_]*\.c\).*/\1/p' $(1)))

MODULE_SRCS := $(foreach d,drv base copy ipc,\
                   $(call sources_of,$(GAUDI_SRC)/$(d)/sources.am))
EMU_SRCS    := $(call sources_of,$(GAUDI_SRC)/emu/sources.am)
PERF_SRCS   := $(PERF_SRC)/perftest_gaudi.c

obj_of = $(patsubst $(TOP_SRCDIR)/src/%.c,$(OUT)/obj/%.o,$(1))

MODULE    := $(OUT)/libuct_hlgaudi.so.0
EMU       := $(OUT)/libgaudi_emu.so.0
PERF      := $(OUT)/libucx_perftest_hlgaudi.so.0
LIBS      := $(MODULE) $(EMU) $(PERF)

# our src/ before the UCX tree: its src/uct/gaudi (upstream's gaudi_gdr
# module) has headers of the same names as ours
PLUGIN_CPPFLAGS := -DHAVE_CONFIG_H -DUCX_GAUDI_PLUGIN -DCPU_FLAGS="" \
                   -I$(TOP_SRCDIR)/src -I$(FEATURES_DIR) \
                   -I$(UCX_SRC) -I$(UCX_SRC)/src
PLUGIN_CFLAGS   := $(UCX_CFLAGS) -fPIC
# the emulator is plain C and exports only its entry points (as in-tree);
# its "config.h" is the UCX tree's, as in-tree: NVALGRIND unless that UCX
# was configured --with-valgrind (no valgrind header needed then)
EMU_CPPFLAGS    := -DHAVE_CONFIG_H -I$(TOP_SRCDIR)/src -I$(UCX_SRC)
EMU_CFLAGS      := $(UCX_CFLAGS) -fPIC -fvisibility=hidden
UCX_LDFLAGS     := -L$(UCX_PREFIX)/lib -Wl,-rpath,$(UCX_PREFIX)/lib
SO_LDFLAGS       = -shared -Wl,--no-undefined -Wl,-soname,$(notdir $@)

all: $(LIBS)

$(OUT)/obj/uct/gaudi/emu/%.o: $(GAUDI_SRC)/emu/%.c $(UCX_SRC)/config.h
	@mkdir -p $(@D)
	@echo "  CC       $(notdir $@)"
	@$(CC) $(EMU_CPPFLAGS) $(EMU_CFLAGS) -MMD -MP -c -o $@ $<

$(OUT)/obj/%.o: $(TOP_SRCDIR)/src/%.c $(FEATURES_DIR)/ucx_gaudi_features.h \
		$(UCX_SRC)/config.h
	@mkdir -p $(@D)
	@echo "  CC       $(notdir $@)"
	@$(CC) $(PLUGIN_CPPFLAGS) $(PLUGIN_CFLAGS) -MMD -MP -c -o $@ $<

# -Bsymbolic-functions: the module's calls to its own functions stay its
# own when another loaded module (upstream's libuct_gaudi) exports a
# function of the same name
$(MODULE): $(call obj_of,$(MODULE_SRCS))
	@echo "  CCLD     $(notdir $@)"
	@$(CC) $(SO_LDFLAGS) -Wl,-Bsymbolic-functions -o $@ $^ $(UCX_LDFLAGS) \
	    -luct -lucs -lucm \
	    -lcjson -lnuma -ldl -lpthread

$(EMU): $(call obj_of,$(EMU_SRCS))
	@echo "  CCLD     $(notdir $@)"
	@$(CC) $(SO_LDFLAGS) -o $@ $^ -lpthread

# ucx_perf_mem_type_allocators (libucxperf) is ucx_perftest's, which exports
# its data to the modules it loads: left undefined here, as UCX's own
# perftest modules do
$(PERF): $(call obj_of,$(PERF_SRCS)) $(MODULE)
	@echo "  CCLD     $(notdir $@)"
	@$(CC) -shared -Wl,-soname,$(notdir $@) -o $@ \
	    $(call obj_of,$(PERF_SRCS)) -L$(OUT) -l:$(notdir $(MODULE)) \
	    -Wl,-rpath,'$$ORIGIN' $(UCX_LDFLAGS) -luct -lucs

install: $(LIBS)
	@mkdir -p $(LIBDIR)
	cp -f $(LIBS) $(LIBDIR)/

clean:
	rm -rf $(OUT)/obj $(LIBS)

-include $(patsubst %.o,%.d,$(call obj_of,$(MODULE_SRCS) $(EMU_SRCS) \
                                          $(PERF_SRCS)))

.PHONY: all install clean
