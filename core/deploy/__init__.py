"""Deployment files (Kubernetes, Docker Compose, Helm values) for a plan or a search point."""

__all__ = ["compose", "files", "helm", "kubernetes", "point", "section", "spec"]
