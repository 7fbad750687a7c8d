# node-gyp's build of the addon (`npm install` runs `node-gyp rebuild`): the
# same addon.c meson builds, with libusdtkit-runtime's flags from
# pkg-config (the installed usdtkit-runtime.pc, or a build tree's
# meson-uninstalled/ on PKG_CONFIG_PATH). Elsewhere than Linux nothing is
# built and dtrace-provider.js is dtrace-provider's stub.
{
  'conditions': [
    ['OS=="linux"', {
      'targets': [{
        'target_name': 'usdtkit_dtrace_provider',
        'sources': ['addon.c'],
        'defines': ['NAPI_VERSION=8'],
        'cflags': ['-std=gnu11', '<!@(pkg-config --cflags usdtkit-runtime)'],
        'libraries': ['<!@(pkg-config --libs usdtkit-runtime)', '-lm'],
      }],
    }, {
      'targets': [{ 'target_name': 'usdtkit_dtrace_provider_none', 'type': 'none' }],
    }],
  ],
}
