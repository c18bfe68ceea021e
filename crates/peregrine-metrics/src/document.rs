//! One scrape's document: `peregrine_build_info`, the `process_*` families and the
//! component's own families under the prefix `peregrine_COMPONENT_`, encoded by
//! `prometheus-client` in the OpenMetrics text format (ending in `# EOF`).

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::families::{labels, Labels};
use crate::process::ProcessCollector;

/// The `Content-Type` of the document.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The version in `peregrine_build_info` (the workspace's; every crate shares it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Renders the document of `component` (`exchange`, `engine`): `fill` registers the
/// component's metrics on a registry whose prefix is `peregrine_COMPONENT`.
pub fn document(component: &str, fill: impl FnOnce(&mut Registry)) -> String {
    let mut root = Registry::default();
    let info: Family<Labels, Gauge> = Family::default();
    info.get_or_create(&labels(&[("version", VERSION), ("component", component)]))
        .set(1);
    root.register(
        "peregrine_build_info",
        "Always 1; the labels say which build and component this is.",
        info,
    );
    root.register_collector(Box::new(ProcessCollector));
    fill(root.sub_registry_with_prefix(format!("peregrine_{component}")));
    let mut out = String::new();
    // Writing into a String cannot fail; an encoder error would be a bug in a
    // metric's encoding, and a partial document is still worth serving.
    if let Err(e) = encode(&mut out, &root) {
        log::warn!("metrics: encoding failed: {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::Families;

    #[test]
    fn the_document_has_build_info_process_metrics_and_the_component() {
        let text = document("exchange", |reg| {
            let mut f = Families::new();
            f.single_counter("trades", "Fills.", 3);
            reg.register_collector(Box::new(f));
        });
        assert!(text.contains(&format!(
            "peregrine_build_info{{version=\"{VERSION}\",component=\"exchange\"}} 1\n"
        )));
        for name in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_virtual_memory_bytes ",
            "process_open_fds ",
            "process_max_fds ",
            "process_start_time_seconds ",
            "process_threads ",
            "peregrine_exchange_trades_total 3\n",
        ] {
            assert!(text.contains(&format!("\n{name}")), "{name} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }
}
