//! The OTLP pipeline: OpenTelemetry's SDK tracer provider with a batch span processor
//! (a thread of its own: ending a span on the queue manager thread only hands it to a
//! bounded queue, which drops spans when full) and the OTLP/HTTP protobuf exporter
//! (reqwest's blocking client, used only on that thread).
//!
//! Export failures never reach messaging: [`WatchedExporter`] counts them in
//! [`ExportFailures`], and a task on the queue manager thread (`runtime::tracing_failures`)
//! turns the count into at most one FRY5591W a minute.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracerProvider, SpanData, SpanExporter,
};
use opentelemetry_sdk::Resource;

use super::settings::{SamplerChoice, TracingSettings};

/// How long spans wait in the batch queue at most before they are sent.
const EXPORT_DELAY: Duration = Duration::from_secs(1);
/// Spans held for export at most; more are dropped.
const MAX_QUEUED_SPANS: usize = 8192;
/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Failed exports since the queue manager started, and the last one's error.
#[derive(Debug, Default)]
pub(crate) struct ExportFailures {
    failed: AtomicU64,
    last_error: Mutex<String>,
}

impl ExportFailures {
    /// Counts one failed export.
    fn note(&self, error: String) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = error;
        }
        self.failed.fetch_add(1, Ordering::Relaxed);
    }

    /// Failed exports so far, and the last error.
    pub(crate) fn snapshot(&self) -> (u64, String) {
        let failed = self.failed.load(Ordering::Relaxed);
        let last = self
            .last_error
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        (failed, last)
    }
}

/// The OTLP exporter, counting its failures.
#[derive(Debug)]
struct WatchedExporter {
    inner: opentelemetry_otlp::SpanExporter,
    failures: Arc<ExportFailures>,
}

impl SpanExporter for WatchedExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let r = self.inner.export(batch).await;
        if let Err(e) = &r {
            self.failures.note(e.to_string());
        }
        r
    }

    fn shutdown_with_timeout(&mut self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// Why tracing could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PipelineError {
    /// The exporter refused its configuration (e.g. a URL it cannot parse).
    #[error("the OTLP exporter cannot be built: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// The thread that builds it could not be run.
    #[error("the OTLP exporter could not be built on a thread of its own")]
    Thread,
}

/// Builds the tracer provider for `settings`. Built on a short-lived thread of its own:
/// reqwest's blocking client may not be made inside the queue manager's tokio runtime.
pub(crate) fn pipeline(
    settings: &TracingSettings,
    failures: Arc<ExportFailures>,
) -> Result<SdkTracerProvider, PipelineError> {
    let settings = settings.clone();
    std::thread::scope(|scope| {
        scope
            .spawn(move || build(&settings, failures))
            .join()
            .map_err(|_| PipelineError::Thread)?
    })
}

fn build(
    settings: &TracingSettings,
    failures: Arc<ExportFailures>,
) -> Result<SdkTracerProvider, PipelineError> {
    let mut builder = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_timeout(EXPORT_TIMEOUT);
    if let Some(url) = &settings.endpoint {
        builder = builder.with_endpoint(url.clone());
    }
    let exporter = WatchedExporter {
        inner: builder.build()?,
        failures,
    };
    let batches = BatchConfigBuilder::default()
        .with_scheduled_delay(EXPORT_DELAY)
        .with_max_queue_size(MAX_QUEUED_SPANS)
        .build();
    let processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(batches)
        .build();
    let sampler = match settings.sampler {
        SamplerChoice::Always => Sampler::AlwaysOn,
        SamplerChoice::Parent | SamplerChoice::Off => {
            Sampler::ParentBased(Box::new(Sampler::AlwaysOff))
        }
        SamplerChoice::Ratio(r) => Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(r))),
    };
    let resource = Resource::builder()
        .with_service_name(settings.service_name.clone())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(sampler)
        .with_resource(resource)
        .build())
}
