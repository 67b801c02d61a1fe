//! What qm.ini's Tracing stanza and the standard OpenTelemetry environment variables
//! ask for, resolved once at start into [`TracingSettings`] (pure: no I/O, no SDK).
//!
//! qm.ini `Tracing/Endpoint` is the OTLP/HTTP base URL (`/v1/traces` is added unless the
//! path already ends with it); empty means off unless `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, which the exporter then reads as
//! OpenTelemetry specifies. `OTEL_TRACES_SAMPLER` (with `OTEL_TRACES_SAMPLER_ARG`), when
//! set to a value this module knows, takes the place of `Sampler`/`Ratio`.

use crate::qm_ini::TracingStanza;

/// Which spans the queue manager makes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum SamplerChoice {
    /// None: tracing is off whatever the endpoint.
    Off,
    /// Every message operation, joining the message's trace when it has one.
    Always,
    /// Only operations on messages whose `traceparent` says sampled.
    Parent,
    /// Messages with a `traceparent` follow its sampled flag; others are sampled at this
    /// ratio (by trace id, so every queue manager agrees on a trace).
    Ratio(f64),
}

impl std::fmt::Display for SamplerChoice {
    /// As qm.ini's Sampler spells it (`ratio 0.25`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SamplerChoice::Off => f.write_str("off"),
            SamplerChoice::Always => f.write_str("always"),
            SamplerChoice::Parent => f.write_str("parent"),
            SamplerChoice::Ratio(r) => write!(f, "ratio {r}"),
        }
    }
}

/// Tracing as configured: where spans go and which are made.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TracingSettings {
    /// The OTLP/HTTP traces URL; `None`: the exporter reads the OTEL environment.
    pub endpoint: Option<String>,
    /// Which spans are made.
    pub sampler: SamplerChoice,
    /// `service.name` of the spans' resource.
    pub service_name: String,
}

impl TracingSettings {
    /// The settings from `stanza` for queue manager `qmgr`, reading the environment
    /// through `env`; `None` when tracing is off.
    pub fn resolve(
        stanza: &TracingStanza,
        qmgr: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Option<TracingSettings> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let endpoint = if stanza.endpoint.trim().is_empty() {
            if set("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
                && set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
            {
                return None;
            }
            None
        } else {
            Some(traces_url(stanza.endpoint.trim()))
        };
        let from_ini = match stanza.sampler.to_ascii_lowercase().as_str() {
            "off" => SamplerChoice::Off,
            "always" => SamplerChoice::Always,
            "ratio" => SamplerChoice::Ratio(stanza.ratio_value().unwrap_or(1.0)),
            _ => SamplerChoice::Parent,
        };
        let arg = set("OTEL_TRACES_SAMPLER_ARG")
            .and_then(|a| a.trim().parse::<f64>().ok())
            .filter(|r| (0.0..=1.0).contains(r))
            .unwrap_or(1.0);
        let sampler = match set("OTEL_TRACES_SAMPLER").as_deref().map(str::trim) {
            Some("always_off") => SamplerChoice::Off,
            Some("always_on") => SamplerChoice::Always,
            Some("parentbased_always_off") => SamplerChoice::Parent,
            Some("traceidratio" | "parentbased_traceidratio") => SamplerChoice::Ratio(arg),
            _ => from_ini,
        };
        if sampler == SamplerChoice::Off {
            return None;
        }
        let service_name = if stanza.service_name.trim().is_empty() {
            qmgr.to_string()
        } else {
            stanza.service_name.trim().to_string()
        };
        Some(TracingSettings {
            endpoint,
            sampler,
            service_name,
        })
    }

    /// Where spans go, for messages: the URL, or the environment variable that names it.
    pub fn destination(&self) -> String {
        self.endpoint
            .clone()
            .unwrap_or_else(|| "the endpoint OTEL_EXPORTER_OTLP_ENDPOINT names".into())
    }
}

/// The OTLP/HTTP traces URL for a base `endpoint`.
fn traces_url(endpoint: &str) -> String {
    if endpoint.trim_end_matches('/').ends_with("/v1/traces") {
        endpoint.to_string()
    } else {
        format!("{}/v1/traces", endpoint.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stanza(endpoint: &str, sampler: &str, ratio: f64) -> TracingStanza {
        TracingStanza {
            endpoint: endpoint.into(),
            sampler: sampler.into(),
            ratio: ratio.to_string(),
            service_name: String::new(),
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn an_empty_endpoint_or_sampler_off_is_off() {
        assert_eq!(
            TracingSettings::resolve(&stanza("", "always", 1.0), "QM", no_env),
            None
        );
        let off = stanza("http://localhost:4318", "off", 1.0);
        assert_eq!(TracingSettings::resolve(&off, "QM", no_env), None);
    }

    #[test]
    fn the_endpoint_gets_the_traces_path_and_the_service_its_qmgr_name() {
        let s = stanza("http://localhost:4318/", "parent", 1.0);
        let t = TracingSettings::resolve(&s, "QM1", no_env).expect("on");
        assert_eq!(
            t.endpoint.as_deref(),
            Some("http://localhost:4318/v1/traces")
        );
        assert_eq!(t.service_name, "QM1");
        assert_eq!(t.sampler, SamplerChoice::Parent);
        let s = stanza("http://c:4318/v1/traces", "ratio", 0.25);
        let t = TracingSettings::resolve(&s, "QM1", no_env).expect("on");
        assert_eq!(t.endpoint.as_deref(), Some("http://c:4318/v1/traces"));
        assert_eq!(t.sampler, SamplerChoice::Ratio(0.25));
    }

    #[test]
    fn the_otel_environment_switches_tracing_on_and_picks_the_sampler() {
        let env = |name: &str| match name {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318".to_string()),
            "OTEL_TRACES_SAMPLER" => Some("traceidratio".to_string()),
            "OTEL_TRACES_SAMPLER_ARG" => Some("0.5".to_string()),
            _ => None,
        };
        let t = TracingSettings::resolve(&stanza("", "parent", 1.0), "QM", env).expect("on");
        assert_eq!(t.endpoint, None, "the exporter reads the environment");
        assert_eq!(t.sampler, SamplerChoice::Ratio(0.5));
    }
}
