"""RoIHeads (box branch) with torchvision's matching, sampling, loss and postprocessing."""
import numpy as np

import flowvision.backend as flow
import flowvision.backend.nn.functional as F
from flowvision.backend import nn
from flowvision.ops import batched_nms, box_iou, clip_boxes_to_image, remove_small_boxes, roi_align

from . import _utils as det_utils

__all__ = ["RoIHeads", "fastrcnn_loss", "maskrcnn_loss", "maskrcnn_inference"]


def maskrcnn_inference(x, labels):
    """Per detection, the sigmoid mask of its predicted class: list of [N_i, 1, M, M]."""
    mask_prob = x.sigmoid()
    boxes_per_image = [int(lab.shape[0]) for lab in labels]
    lab = np.concatenate([lab.numpy() for lab in labels]) if labels else np.zeros((0,), np.int64)
    mask_prob = mask_prob[flow.from_numpy(np.arange(lab.shape[0])), flow.from_numpy(lab)][:, None]
    return mask_prob.split(boxes_per_image, dim=0)


def project_masks_on_boxes(gt_masks, boxes, matched_idxs, M):
    rois = flow.cat([flow.from_numpy(np.asarray(matched_idxs)).to(boxes.dtype)[:, None], boxes.detach()], dim=1)
    return roi_align(gt_masks[:, None].to(rois.dtype), rois, (M, M), 1.0)[:, 0]


def maskrcnn_loss(mask_logits, proposals, gt_masks, gt_labels, mask_matched_idxs):
    M = mask_logits.shape[-1]
    labels = np.concatenate([gl.numpy()[idx] for gl, idx in zip(gt_labels, mask_matched_idxs)])
    mask_targets = flow.cat([project_masks_on_boxes(m, p, i, M)
                             for m, p, i in zip(gt_masks, proposals, mask_matched_idxs)], dim=0)
    if mask_targets.numel() == 0:
        return mask_logits.sum() * 0
    picked = mask_logits[flow.from_numpy(np.arange(labels.shape[0])), flow.from_numpy(labels.astype(np.int64))]
    return F.binary_cross_entropy_with_logits(picked, mask_targets)


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    labels = flow.cat(labels, dim=0)
    regression_targets = flow.cat(list(regression_targets), dim=0)
    classification_loss = F.cross_entropy(class_logits, labels)
    lab = labels.numpy()
    pos = np.nonzero(lab > 0)[0]
    N = class_logits.shape[0]
    box_regression = box_regression.reshape(N, box_regression.shape[-1] // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[flow.from_numpy(pos), flow.from_numpy(lab[pos])],
                                regression_targets[flow.from_numpy(pos)], beta=1 / 9, reduction="sum")
    return classification_loss, box_loss / lab.size


class RoIHeads(nn.Module):
    def __init__(self, box_roi_pool, box_head, box_predictor, fg_iou_thresh, bg_iou_thresh, batch_size_per_image,
                 positive_fraction, bbox_reg_weights, score_thresh, nms_thresh, detections_per_img,
                 mask_roi_pool=None, mask_head=None, mask_predictor=None, keypoint_roi_pool=None, keypoint_head=None,
                 keypoint_predictor=None):
        super().__init__()
        if any(m is not None for m in (keypoint_roi_pool, keypoint_head, keypoint_predictor)):
            raise NotImplementedError("the keypoint branch (Keypoint R-CNN) is not implemented yet")
        self.box_similarity = box_iou
        self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh, allow_low_quality_matches=False)
        self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image, positive_fraction)
        if bbox_reg_weights is None:
            bbox_reg_weights = (10.0, 10.0, 5.0, 5.0)
        self.box_coder = det_utils.BoxCoder(bbox_reg_weights)
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.mask_roi_pool = mask_roi_pool
        self.mask_head = mask_head
        self.mask_predictor = mask_predictor
        self.keypoint_roi_pool = self.keypoint_head = self.keypoint_predictor = None

    def has_mask(self):
        return self.mask_roi_pool is not None and self.mask_head is not None and self.mask_predictor is not None

    def has_keypoint(self):
        return False

    def check_targets(self, targets):
        if targets is None:
            raise ValueError("targets should not be None")
        if not all("boxes" in t for t in targets):
            raise ValueError("Every element of targets should have a boxes key")
        if not all("labels" in t for t in targets):
            raise ValueError("Every element of targets should have a labels key")
        if self.has_mask() and not all("masks" in t for t in targets):
            raise ValueError("Every element of targets should have a masks key")

    def assign_targets_to_proposals(self, proposals, gt_boxes, gt_labels):
        matched_idxs, labels = [], []
        for props, gtb, gtl in zip(proposals, gt_boxes, gt_labels):
            n = props.shape[0]
            if gtb.numel() == 0:
                clamped = np.zeros((n,), np.int64)
                lab = np.zeros((n,), np.int64)
            else:
                mi = self.proposal_matcher(box_iou(gtb.detach(), props.detach())).numpy()
                clamped = np.maximum(mi, 0)
                lab = gtl.numpy()[clamped].astype(np.int64)
                lab[mi == self.proposal_matcher.BELOW_LOW_THRESHOLD] = 0
                lab[mi == self.proposal_matcher.BETWEEN_THRESHOLDS] = -1
            matched_idxs.append(clamped)
            labels.append(lab)
        return matched_idxs, labels

    def select_training_samples(self, proposals, targets):
        self.check_targets(targets)
        dtype = proposals[0].dtype
        gt_boxes = [t["boxes"].to(dtype) for t in targets]
        gt_labels = [t["labels"] for t in targets]
        proposals = [flow.cat((p, g.detach())) for p, g in zip(proposals, gt_boxes)]
        matched_idxs, labels = self.assign_targets_to_proposals(proposals, gt_boxes, gt_labels)
        pos, neg = self.fg_bg_sampler([flow.from_numpy(lab) for lab in labels])
        out_props, out_labels, out_matched, matched_gt = [], [], [], []
        for i in range(len(proposals)):
            idx = np.nonzero(pos[i].numpy() | neg[i].numpy())[0]
            out_props.append(proposals[i][flow.from_numpy(idx)])
            out_labels.append(flow.from_numpy(labels[i][idx]))
            out_matched.append(matched_idxs[i][idx])
            gtb = gt_boxes[i].detach()
            if gtb.numel() == 0:
                gtb = flow.zeros((1, 4), dtype=dtype)
            matched_gt.append(gtb[flow.from_numpy(out_matched[-1])])
        regression_targets = self.box_coder.encode(matched_gt, out_props)
        return out_props, out_matched, out_labels, regression_targets

    def postprocess_detections(self, class_logits, box_regression, proposals, image_shapes):
        num_classes = class_logits.shape[-1]
        boxes_per_image = [p.shape[0] for p in proposals]
        pred_boxes = self.box_coder.decode(box_regression, proposals)
        pred_scores = F.softmax(class_logits, -1)
        all_boxes, all_scores, all_labels = [], [], []
        for boxes, scores, image_shape in zip(pred_boxes.split(boxes_per_image, 0),
                                              pred_scores.split(boxes_per_image, 0), image_shapes):
            boxes = clip_boxes_to_image(boxes, image_shape).numpy()
            scores = scores.numpy()
            labels = np.broadcast_to(np.arange(num_classes, dtype=np.int64)[None], scores.shape)
            boxes = boxes[:, 1:].reshape(-1, 4)
            scores = scores[:, 1:].reshape(-1)
            labels = labels[:, 1:].reshape(-1)
            inds = np.nonzero(scores > self.score_thresh)[0]
            boxes, scores, labels = boxes[inds], scores[inds], labels[inds]
            keep = remove_small_boxes(flow.from_numpy(boxes), min_size=1e-2).numpy()
            boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
            keep = batched_nms(flow.from_numpy(boxes), flow.from_numpy(scores), flow.from_numpy(labels),
                               self.nms_thresh).numpy()[: self.detections_per_img]
            all_boxes.append(flow.from_numpy(boxes[keep]))
            all_scores.append(flow.from_numpy(scores[keep]))
            all_labels.append(flow.from_numpy(labels[keep]))
        return all_boxes, all_scores, all_labels

    def forward(self, features, proposals, image_shapes, targets=None):
        if targets is not None:
            for t in targets:
                if not t["boxes"].is_floating_point():
                    raise TypeError(f"target boxes must of float type, instead got {t['boxes'].dtype}")
                if t["labels"].dtype != flow.int64:
                    raise TypeError(f"target labels must of int64 type, instead got {t['labels'].dtype}")
        if self.training:
            proposals, matched_idxs, labels, regression_targets = self.select_training_samples(proposals, targets)
        box_features = self.box_roi_pool(features, proposals, image_shapes)
        box_features = self.box_head(box_features)
        class_logits, box_regression = self.box_predictor(box_features)
        result, losses = [], {}
        if self.training:
            loss_classifier, loss_box_reg = fastrcnn_loss(class_logits, box_regression, labels, regression_targets)
            losses = {"loss_classifier": loss_classifier, "loss_box_reg": loss_box_reg}
        else:
            with flow.no_grad():
                boxes, scores, labels = self.postprocess_detections(class_logits.detach(), box_regression.detach(),
                                                                    proposals, image_shapes)
            for b, s, lab in zip(boxes, scores, labels):
                result.append({"boxes": b, "labels": lab, "scores": s})
        if self.has_mask():
            if self.training:
                mask_proposals, pos_matched_idxs = [], []
                for i in range(len(proposals)):
                    pos = np.nonzero(labels[i].numpy() > 0)[0]
                    mask_proposals.append(proposals[i][flow.from_numpy(pos)])
                    pos_matched_idxs.append(matched_idxs[i][pos])
            else:
                mask_proposals = [r["boxes"] for r in result]
            mask_features = self.mask_roi_pool(features, mask_proposals, image_shapes)
            mask_logits = self.mask_predictor(self.mask_head(mask_features))
            if self.training:
                losses["loss_mask"] = maskrcnn_loss(mask_logits, mask_proposals, [t["masks"] for t in targets],
                                                    [t["labels"] for t in targets], pos_matched_idxs)
            else:
                with flow.no_grad():
                    probs = maskrcnn_inference(mask_logits.detach(), [r["labels"] for r in result])
                for p, r in zip(probs, result):
                    r["masks"] = p
        return result, losses
