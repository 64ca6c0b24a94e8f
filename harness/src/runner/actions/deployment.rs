//! Steps on the deployment: `reload`, `process`, `file`.

use super::*;
use crate::deploy::DeployError;

impl Exec {
    pub(super) async fn process(&self, p: &ProcessStep, _timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let mut guard = self.0.deployment.lock().await;
        let Some(proc) = guard.as_mut().and_then(Deployment::process_mut) else {
            return err("no implementation process was launched".into());
        };
        if let Some(within) = p.wait_exit {
            proc.wait_exit(within).await;
        }
        let mut out = proc.output_so_far();
        out.log_format = self.0.cx.target.spec.logs.clone();
        ActionOutput::observed(Observation::ProcessRead(out))
    }

    pub(super) async fn file(&self, f: &FileStep, _timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let vars = self.0.session.lock().await.vars.clone();
        let rel = match render(&f.path, &vars) {
            Ok(r) => r,
            Err(e) => return err(e.to_string()),
        };
        let path = self.0.cx.run_dir.join(rel);
        let read = if f.stat_only {
            FileRead::stat(&path)
        } else {
            FileRead::read(&path)
        };
        ActionOutput::observed(Observation::FileRead(
            read.with_format(self.0.cx.target.spec.logs.clone()),
        ))
    }
    pub(super) async fn reload(
        &self,
        r: &crate::scenario::ReloadStep,
    ) -> Result<ActionOutput, DeployError> {
        let mut guard = self.0.deployment.lock().await;
        let deployment = guard
            .as_mut()
            .ok_or_else(|| DeployError::plain("no deployment to reload"))?;
        let mut dep = r
            .deployment
            .clone()
            .unwrap_or_else(|| deployment.spec().clone());
        for (k, a) in &r.add_agents {
            dep.agents.insert(k.clone(), a.clone());
        }
        for k in &r.remove_agents {
            dep.agents.remove(k);
        }
        let keep: Vec<String> = dep.agents.keys().cloned().collect();
        // The session stays locked across the reload: no step records (or adds a secret) while
        // the deployment's secrets, variables and endpoints change.
        let mut session = self.0.session.lock().await;
        let files = deployment.reload(dep, &mut session.redactor).await?;
        let rendered = deployment.rendered();
        session.vars.extend(rendered.vars.clone());
        session.agent_urls = rendered.agent_urls.clone();
        session.conns.retain(|k, _| keep.contains(k));
        drop(session);
        Ok(ActionOutput::observed(Observation::Reloaded(files)))
    }
}
