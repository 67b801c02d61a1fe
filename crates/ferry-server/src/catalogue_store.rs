//! objects.json: the queue manager's object definitions on disk.
//!
//! Written whole on every change (temp file, fsync, rename, fsync of the directory), so
//! a crash leaves either the old or the new file, never half of one. Definitions change
//! rarely (MQSC, permanent dynamic queues), so simplicity beats incremental updates.

use ferry_engine::Catalogue;
use std::io::Write;
use std::path::Path;

/// Why the definitions could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is not a Ferry catalogue.
    #[error("{path} is damaged or not a Ferry object file: {source}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        source: serde_json::Error,
    },
}

/// Writes the definitions atomically.
pub fn save(path: &Path, catalogue: &Catalogue) -> Result<(), CatalogueError> {
    let io = |source| CatalogueError::Io {
        path: path.display().to_string(),
        source,
    };
    let text = serde_json::to_vec_pretty(catalogue).map_err(|source| CatalogueError::Format {
        path: path.display().to_string(),
        source,
    })?;
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(&text).map_err(io)?;
        f.sync_data().map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Reads the definitions.
pub fn load(path: &Path) -> Result<Catalogue, CatalogueError> {
    let text = std::fs::read(path).map_err(|source| CatalogueError::Io {
        path: path.display().to_string(),
        source,
    })?;
    serde_json::from_slice(&text).map_err(|source| CatalogueError::Format {
        path: path.display().to_string(),
        source,
    })
}
